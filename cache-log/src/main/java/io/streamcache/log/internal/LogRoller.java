package io.streamcache.log.internal;

import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFile;
import org.agrona.collections.LongArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;
import java.nio.ByteBuffer;
import java.util.function.LongConsumer;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_CREATE;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_DATA;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_DELETE;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_SEAL;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_TRUNCATE;
import static io.streamcache.log.internal.LogRecordDescriptor.align;
import static io.streamcache.log.internal.LogRecordDescriptor.alignedLength;

/**
 * The aggregating writer's files: the current file and where the next write goes in it, when it
 * was last forced, the {@link LogSegmentTable segment table} durable records update, moving to
 * the next file and retiring dead ones. Confined to the writer thread (the positioning runs on
 * the starting thread before it starts), except {@link #currentFileNumber()}, readable by any
 * thread (volatile).
 *
 * <h2>Files</h2>
 * The log is a sequence of files from the {@link LogDirectory}; the first record of each is a
 * SNAPSHOT of the segment table (the writer's own, which matches the log position exactly),
 * written and forced when the writer moves to the file. The table keeps that record encoded as
 * records change it ({@link SnapshotImage}), so a roll writes it as it is: no walk of the
 * segments, no buffer allocated per roll. A record that does not fit in the
 * current file's rest moves the writer to the next file; the rest stays zero. A file other than
 * the current one whose data are all dead (every segment with data in it deleted, or truncated
 * past its highest offset there) is retired after the record that killed it is durable.
 *
 * <p>Records become part of the segment table and are reported to the {@link LogRecordListener}
 * as they become durable ({@link #apply}), never before. A page that holds acknowledged data is
 * never written again, except the page holding a recovered tail ({@link #resume}), or the page
 * where the first record not acknowledged starts when a failed write is repaired
 * ({@link #rewind}): rewritten with the same bytes, a padding record to the end of the page and
 * zeros after it (a valid end of the log, so a roll may leave it so), then once more with the
 * same bytes and the records (or a padding record) that follow.
 */
final class LogRoller {
    private static final Logger LOG = LoggerFactory.getLogger(LogRoller.class);

    private final LogDirectory directory;
    private final LogRecordListener listener;
    private final WriterCounters counters;
    private final RecordBatch batch;
    private final long fileLength;
    private final int batchLength;
    private final int maxPayload;
    private final DurabilityPolicy.Kind durability;
    private final LogSegmentTable table;
    private final LongArrayList deadFiles = new LongArrayList();
    /** Dead files whose retirement is not recorded yet ({@link #retirePending()}). */
    private final LongArrayList pendingRetired = new LongArrayList();

    private LogFile file;
    private long fileNumber;
    /** The current file's identity when it was opened ({@link #checkCurrentFile}). */
    private FileIdentity identity;
    /** File position of the batch buffer's first byte: a multiple of 4 KB. */
    private long filePosition;
    private long lastForceNanos;
    private boolean unforced;
    /** A roll failed: recovery retries it. */
    private boolean rollPending;
    /** A TRUNCATE or DELETE became durable: files may have died. */
    private boolean truncatedOrDeleted;
    /** The file records go to now: written by the writer thread, read by compaction. */
    private volatile long currentFileNumber;
    /** Told the number of each new file once its SNAPSHOT is written (the recovery checkpoint's trigger). */
    private LongConsumer rolled = number -> { };

    LogRoller(final LogDirectory directory, final LogRecordListener listener, final WriterCounters counters, final RecordBatch batch) {
        this(directory, listener, counters, batch, new LogSegmentTable());
    }

    /** @param table the segment table to keep: an empty one, or one seeded from recovery ({@link PreparedSegmentTable}). */
    LogRoller(final LogDirectory directory, final LogRecordListener listener, final WriterCounters counters, final RecordBatch batch,
              final LogSegmentTable table) {
        this.table = Objects.requireNonNull(table, "table");
        final LogConfig config = directory.config();
        this.directory = directory;
        this.listener = listener;
        this.counters = counters;
        this.batch = batch;
        this.fileLength = config.fileLength();
        this.batchLength = config.batchLength();
        this.maxPayload = config.maxAppendLength();
        this.durability = config.durability().kind();
        this.lastForceNanos = System.nanoTime();
    }

    LogSegmentTable table() {
        return table;
    }

    /**
     * @param rolled told, on the writer thread, the number of each file rolled to after its
     *               SNAPSHOT was written (and forced, but with {@code NEVER}); must not block.
     */
    void onRoll(final LongConsumer rolled) {
        this.rolled = rolled;
    }

    // ------------------------------------------------------------------------------------------
    // Moving to a file
    // ------------------------------------------------------------------------------------------

    /**
     * Moves to the next file: takes it from the directory, writes the segment table as its
     * SNAPSHOT record and forces it. The caller wrote out the batch before (padded): the batch
     * starts empty in the new file.
     */
    void roll() throws IOException {
        if (unforced && file != null) {
            // INTERVAL or NEVER: the file is closed below and never forced again (a later force
            // request forces only the current file); compaction may retire
            // the originals of copies it holds once they are written, so force it now.
            force();
        }
        batch.reset();
        final LogDirectory.NumberedFile next;
        try {
            next = directory.nextFile();
        } catch (final IOException | RuntimeException e) {
            rollPending = true;
            throw e;
        }
        directory.clearSpareError();
        final FileIdentity key;
        try {
            key = FileIdentity.of(directory.filePath(next.number()));
        } catch (final IOException e) {
            closeQuietly(next.file());
            directory.retire(next.number());
            rollPending = true;
            throw e;
        }
        final long start;
        try {
            start = writeSnapshot(next.file(), next.number());
            // Recovery refuses a directory that lacks a file recorded as live (the new one included).
            CurrentFileRecord.write(directory.path(), next.number(), directory.fileNumbers());
        } catch (final IOException | RuntimeException e) {
            closeQuietly(next.file());
            directory.retire(next.number());
            rollPending = true;
            throw e;
        }
        rollPending = false;
        final LogFile old = file;
        identity = key;
        file = next.file();
        fileNumber = next.number();
        filePosition = start;
        table.currentFile(fileNumber);
        currentFileNumber = fileNumber;
        if (old != null) {
            closeQuietly(old);
            counters.fileRolled();
        }
        rolled.accept(fileNumber);
        retireDeadFiles();
    }

    /**
     * Writes the SNAPSHOT record at the head of a new file, padded to a page, and forces it.
     *
     * @return where the first batch goes.
     */
    private long writeSnapshot(final LogFile target, final long number) throws IOException {
        final int payload = table.snapshotPayloadLength();
        final int total = align(alignedLength(payload), PAGE_LENGTH);
        if (FIRST_RECORD_POSITION + (long)total + Math.max(batchLength, alignedLength(maxPayload) + PAGE_LENGTH) > fileLength) {
            throw new IOException("the segment table snapshot of " + total + " bytes (" + table.segmentCount()
                + " segments) leaves no room for a batch or an append of maxAppendLength=" + maxPayload + " in fileLength="
                + fileLength + "; configure longer log files");
        }
        // Kept encoded by the table as segments change: a header, a CRC and one write.
        final ByteBuffer record = table.snapshotRecord(number, batch.crc());
        target.write(record, FIRST_RECORD_POSITION);
        if (durability != DurabilityPolicy.Kind.NEVER) {
            final long forceStart = System.nanoTime();
            target.force();
            counters.force(System.nanoTime() - forceStart);
        }
        return FIRST_RECORD_POSITION + total;
    }

    /**
     * Continues the log in file {@code number} after {@code position}: keeps the valid bytes of
     * the page holding it in the batch (the first batch rewrites that page with them), and
     * zeros the span a torn batch may have reached after it, forced.
     */
    void resume(final long number, final long position) throws IOException {
        if (position > fileLength) {
            throw new IOException("recovered tail position=" + position + " is past fileLength=" + fileLength + " of file " + number);
        }
        file = directory.openExisting(number);
        identity = FileIdentity.of(directory.filePath(number));
        fileNumber = number;
        currentFileNumber = number;
        table.currentFile(number);
        final long page = position & -PAGE_LENGTH;
        filePosition = page;
        final byte[] prefixBytes = readPrefix(position);
        // A torn write reaches at most one batch, or one long append, past the page.
        final long tornSpan = Math.max(batch.capacity(), (long)align(alignedLength(maxPayload), PAGE_LENGTH) + PAGE_LENGTH);
        final long zeroEnd = durability == DurabilityPolicy.Kind.EVERY_BATCH ? Math.min(fileLength, page + tornSpan) : fileLength;
        batch.resume(file, page, zeroEnd, prefixBytes);
        file.force();
        // The files recovery left (a file it cut or an allowed loss no longer listed).
        CurrentFileRecord.write(directory.path(), number, directory.fileNumbers());
    }

    /**
     * After a failed write: moves the log's end in the current file back to {@code position} (the
     * start of the first record not acknowledged, which an earlier cut write may have written in
     * part, before the batch's file position), as {@link #resume} does at an open: the valid bytes
     * of the page holding it stay in the batch, {@code [page, zeroEnd)} is written with those bytes,
     * a padding record to the end of their page, then zeros, and forced: if the writer rolls to
     * the next file before it writes the page again, the page still ends the file validly. The batch's file position moves only once that succeeded.
     */
    void rewind(final long position, final long zeroEnd) throws IOException {
        final long page = position & -PAGE_LENGTH;
        try {
            batch.resume(file, page, Math.max(zeroEnd, align(position, PAGE_LENGTH)), readPrefix(position));
            force();
        } catch (final IOException | RuntimeException e) {
            // Still at the old file position, with nothing of its own in the batch (the cut write
            // that carried the record left no durable prefix): the next recovery starts again.
            batch.reset();
            throw e;
        }
        filePosition = page;
    }

    /** The bytes of the current file from the start of the page holding {@code position} to it: durable ones. */
    private byte[] readPrefix(final long position) throws IOException {
        final long page = position & -PAGE_LENGTH;
        final int prefix = (int)(position - page);
        final byte[] prefixBytes = new byte[prefix];
        if (prefix > 0) {
            final ByteBuffer head = ByteBuffer.wrap(prefixBytes);
            final int read = file.read(head, page);
            if (read != prefix) {
                throw new IOException("short read of the tail page of file " + fileNumber + " at position=" + page + ": " + read + " of "
                    + prefix + " bytes");
            }
        }
        return prefixBytes;
    }

    // ------------------------------------------------------------------------------------------
    // Writing
    // ------------------------------------------------------------------------------------------

    /**
     * @return whether a record of {@code aligned} bytes after the batch's {@code used} bytes
     *         still fits in the current file.
     */
    boolean fits(final int used, final int aligned) {
        return filePosition + used + aligned <= fileLength;
    }

    /** Writes {@code bytes} at the batch's file position. */
    void write(final ByteBuffer bytes) throws IOException {
        file.write(bytes, filePosition);
    }

    /** The batch's first {@code end} bytes were written: the batch's file position moves past them. */
    void advance(final int end) {
        filePosition = filePosition + end;
    }

    void force() throws IOException {
        final long forceStart = System.nanoTime();
        file.force();
        checkCurrentFile();
        lastForceNanos = System.nanoTime();
        unforced = false;
        counters.force(lastForceNanos - forceStart);
    }

    /**
     * Checks that the current file is still the directory's ({@link FileIdentity#check()}): one
     * {@code stat} per force, beside an {@code fdatasync}.
     *
     * @throws LogFileGoneException if the file was deleted or replaced.
     */
    void checkCurrentFile() throws IOException {
        if (identity != null && file != null) {
            identity.check();
        }
    }

    /** The current file's identity, for the forces of the {@link ForceStage}. */
    FileIdentity identity() {
        return identity;
    }

    /** A write was not forced (INTERVAL or NEVER durability): under INTERVAL the next force is due an interval after the last. */
    void markUnforced() {
        unforced = true;
    }

    boolean unforced() {
        return unforced;
    }

    long lastForceNanos() {
        return lastForceNanos;
    }

    boolean rollPending() {
        return rollPending;
    }

    // ------------------------------------------------------------------------------------------
    // Durable records
    // ------------------------------------------------------------------------------------------

    /**
     * The batch's records ending at or before {@code writtenEnd} are in the log: into the table,
     * to the listener; then forgotten by the batch.
     */
    void apply(final long writtenEnd) {
        final int count = batch.recordCount();
        int i = 0;
        for (; i < count; i++) {
            final int length = batch.length(i);
            final long position = batch.position(i);
            if (position + alignedLength(length) > writtenEnd) {
                break;
            }
            final byte type = batch.type(i);
            final int segment = batch.segment(i);
            final long offset = batch.offset(i);
            switch (type) {
                case TYPE_DATA:
                    table.data(segment, offset + length);
                    break;
                case LogRequest.TYPE_COPY:
                    table.copy(segment, offset + length);
                    counters.copied(length);
                    listener.onCopy(segment, offset, length, fileNumber, position);
                    continue;
                case TYPE_CREATE:
                    table.create(segment, batch.takeName(i));
                    break;
                case TYPE_SEAL:
                    table.seal(segment);
                    break;
                case TYPE_TRUNCATE:
                    table.truncate(segment, offset);
                    truncatedOrDeleted = true;
                    break;
                case TYPE_DELETE:
                    table.delete(segment);
                    truncatedOrDeleted = true;
                    break;
                default:
                    break;
            }
            listener.onRecord(type, segment, offset, length, fileNumber, position);
        }
        batch.dropApplied(i);
    }

    /** Retires the files a durable TRUNCATE or DELETE killed, if one was applied since the last call. */
    void retireIfTruncated() throws IOException {
        if (truncatedOrDeleted) {
            retireDeadFiles();
        }
    }

    private void retireDeadFiles() throws IOException {
        truncatedOrDeleted = false;
        deadFiles.clear();
        table.takeDeadFiles(deadFiles);
        if (!deadFiles.isEmpty() && unforced) {
            // INTERVAL or NEVER: the TRUNCATE or DELETE that killed the files is written, not
            // forced. Forced first, so that a power cut cannot leave a log whose live segments'
            // bytes are in files already deleted.
            force();
        }
        pendingRetired.addAll(deadFiles);
        retirePending();
    }

    /**
     * Retires a file compaction emptied, if the table still has it: forces what was written (the
     * copies) first.
     */
    void retire(final long number) throws IOException {
        if (table.hasFile(number)) {
            if (unforced) {
                force();
            }
            table.removeFile(number);
            pendingRetired.addLong(number);
            retirePending();
        }
    }

    /**
     * Hands the dead files to the directory to unlink or recycle, once a {@link CurrentFileRecord}
     * without them is durable: a file missing at the next open that the record still lists was
     * then lost, not retired. One record write (a small file forced, renamed, the directory
     * forced) per batch of retirements, on the writer thread, as the roll's own. A record that
     * cannot be written (a full disk) leaves the files where they are, still listed, and is
     * tried again at the next retirement or roll: the log stays safe and takes appends.
     */
    private void retirePending() {
        if (pendingRetired.isEmpty()) {
            return;
        }
        final long[] numbers = directory.fileNumbers();
        final long[] live = new long[numbers.length];
        int n = 0;
        for (final long number : numbers) {
            if (!pendingRetired.containsLong(number)) {
                live[n++] = number;
            }
        }
        try {
            CurrentFileRecord.write(directory.path(), fileNumber, Arrays.copyOf(live, n));
        } catch (final IOException e) {
            LOG.warn("log {}: could not record the retirement of files {} in {}; they stay until the next retirement or roll: {}",
                directory.name(), pendingRetired, CurrentFileRecord.FILE_NAME, e.toString());
            return;
        }
        for (int i = 0; i < pendingRetired.size(); i++) {
            final long number = pendingRetired.getLong(i);
            listener.onFileRetired(number);
            directory.retire(number);
            counters.fileRetired();
        }
        pendingRetired.clear();
    }

    // ------------------------------------------------------------------------------------------
    // State
    // ------------------------------------------------------------------------------------------

    /** The current file: what forces in flight force. */
    LogFile file() {
        return file;
    }

    long fileNumber() {
        return fileNumber;
    }

    long filePosition() {
        return filePosition;
    }

    /** Any thread. */
    long currentFileNumber() {
        return currentFileNumber;
    }

    void close() {
        closeQuietly(file);
    }

    static void closeQuietly(final LogFile file) {
        if (file == null) {
            return;
        }
        try {
            file.close();
        } catch (final IOException e) {
            LOG.debug("closing {} failed", file.path(), e);
        }
    }
}
