package io.streamcache.log.internal;

import io.netty.buffer.ByteBuf;
import io.streamcache.log.LogFile;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.CRC_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.PADDING_HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_DATA;
import static io.streamcache.log.internal.LogRecordDescriptor.align;
import static io.streamcache.log.internal.LogRecordDescriptor.alignedLength;
import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * The aggregating writer's batch: the 4 KB-aligned buffer its records are built in and, per
 * record not yet written, what the writer must apply once it is durable (type, segment, offset,
 * length, file position, name). Confined to the writer thread (built on the starting thread
 * before it starts). Allocates nothing per record: the buffers, the CRC and the record arrays
 * are allocated once (the long buffer once per longer append than any before).
 *
 * <h2>4 KB alignment</h2>
 * Every write starts and ends on a 4 KB boundary of the file ({@link io.streamcache.log.AlignmentPolicy}):
 * <pre>
 *  PAD   | rec | rec | rec |pad: skip to 4K |            written: [start, next 4K boundary)
 *  CUT   | rec | rec | re|c rec |                        written: [start, last 4K boundary);
 *                          ^ carried: "c rec" moves to the buffer's head, rewritten with the next batch
 * </pre>
 * A padding record (8 bytes: magic, type, length to skip) says where the next record starts, so
 * recovery never takes padding for the end of the log ({@link #padEnd()}, {@link #cutEnd()},
 * then {@link #written(int)} carries the cut tail).
 *
 * <h2>Appends are atomic records</h2>
 * One append is one record, so it is in the log whole or not at all. An append longer than what
 * the batch buffer has room for is not split: the writer first writes the batch (or keeps its cut
 * tail), then the batch moves to a longer buffer ({@link #growFor}, kept for the next long
 * append), puts the record there and writes it, with the records before it, in one write that
 * ends the batch; after that write it moves back to its batch buffer with the carried tail:
 * <pre>
 *  batch buffer   | rec | rec |                         accept(long): used + aligned &gt; capacity
 *  long buffer    | rec | rec | LONG RECORD ........ | pad |   one write, forced; then back
 * </pre>
 */
final class RecordBatch {
    /** Bytes {@link #resume} compares with the file per read. */
    private static final int COMPARE_LENGTH = 64 << 10;
    /** The normal batch buffer. */
    private final ByteBuffer batchBuffer;
    private final int batchCapacity;
    /** A buffer for a record longer than a batch, kept for the next one; null until one came. */
    private ByteBuffer longBuffer;
    /** Where {@link #resume} reads what is on disk to write only the pages that differ; allocated on first use. */
    private ByteBuffer compareBuffer;
    private final CRC32C crc = new CRC32C();

    // The buffer in use and its views: the normal one, or the long one while a long append is written.
    private ByteBuffer buffer;
    private UnsafeBuffer ub;
    private ByteBuffer writeView;
    private ByteBuffer crcView;
    private ByteBuffer copyView;
    private int capacity;

    // The records not yet applied, in order: first those written but not yet durable (with
    // forces in flight, LogConfig.forcesInFlight > 1), then those in the buffer. The arrays grow
    // (rarely: only when more records wait than ever before) and are never shrunk.
    private byte[] recordType;
    private int[] recordSegment;
    private long[] recordOffset;
    private int[] recordLength;
    private long[] recordPosition;
    private byte[][] recordName;
    private int recordCount;
    /** The first this many records are written (their force is in flight), the others are in the buffer. */
    private int writtenRecords;

    /** Bytes in the buffer: a carried tail or a resumed prefix, then new records. */
    private int used;
    /** Bytes at the buffer's head that are durable already (a resumed tail page being rewritten). */
    private int durablePrefix;
    /** Records were added since the last write. */
    private boolean newRecords;
    private long firstNewNanos;
    private long pendingPayloadBytes;
    private long pendingPaddingBytes;

    /**
     * @param batchCapacity the normal buffer's capacity: a multiple of the page.
     */
    RecordBatch(final int batchCapacity) {
        this.batchCapacity = batchCapacity;
        this.batchBuffer = BufferUtil.allocateDirectAligned(batchCapacity, PAGE_LENGTH);
        use(batchBuffer);
        final int maxRecords = batchCapacity / HEADER_LENGTH + 1;
        this.recordType = new byte[maxRecords];
        this.recordSegment = new int[maxRecords];
        this.recordOffset = new long[maxRecords];
        this.recordLength = new int[maxRecords];
        this.recordPosition = new long[maxRecords];
        this.recordName = new byte[maxRecords][];
    }

    // ------------------------------------------------------------------------------------------
    // Records
    // ------------------------------------------------------------------------------------------

    /**
     * Builds a record at the end of the buffer (header, payload, CRC seeded with
     * {@code fileNumber}) and remembers it; the caller checked that it fits.
     *
     * @param type          a record type, or {@link LogRequest#TYPE_COPY} (a DATA record with
     *                      {@link LogRecordDescriptor#FLAG_COPY}).
     * @param filePosition  the file position of the buffer's first byte.
     */
    void put(final byte type, final int segmentId, final long segmentOffset, final ByteBuf data, final byte[] nameBytes,
             final int length, final long fileNumber, final long filePosition) {
        final int index = used;
        if (type == LogRequest.TYPE_COPY) {
            LogRecordDescriptor.putHeader(ub, index, TYPE_DATA, LogRecordDescriptor.FLAG_COPY, length, segmentId, segmentOffset);
        } else {
            LogRecordDescriptor.putHeader(ub, index, type, length, segmentId, segmentOffset);
        }
        final int payloadIndex = index + HEADER_LENGTH;
        if (data != null) {
            copyPayload(data, payloadIndex, length);
        } else if (nameBytes != null) {
            ub.putBytes(payloadIndex, nameBytes);
        }
        final int aligned = alignedLength(length);
        final int payloadEnd = payloadIndex + length;
        if (index + aligned > payloadEnd) {
            ub.setMemory(payloadEnd, index + aligned - payloadEnd, (byte)0);
        }
        ub.putInt(index + CRC_OFFSET, LogRecordDescriptor.crc(crc, fileNumber, crcView, index, length), ByteOrder.LITTLE_ENDIAN);

        if (recordCount == recordType.length) {
            growRecords();
        }
        final int i = recordCount++;
        recordType[i] = type;
        recordSegment[i] = segmentId;
        recordOffset[i] = segmentOffset;
        recordLength[i] = length;
        recordPosition[i] = filePosition + index;
        recordName[i] = nameBytes;
        used = index + aligned;
        pendingPayloadBytes += length;
        if (!newRecords) {
            newRecords = true;
            firstNewNanos = System.nanoTime();
        }
    }

    /**
     * Copies a producer's bytes into the batch buffer without allocating for direct and heap
     * buffers (Netty's {@code getBytes(int, ByteBuffer)} duplicates a direct buffer per call);
     * other kinds (composites) through {@code getBytes}.
     */
    private void copyPayload(final ByteBuf data, final int index, final int length) {
        final int from = data.readerIndex();
        if (data.hasMemoryAddress()) {
            UNSAFE.copyMemory(null, data.memoryAddress() + from, null, ub.addressOffset() + index, length);
        } else if (data.hasArray()) {
            ub.putBytes(index, data.array(), data.arrayOffset() + from, length);
        } else {
            copyView.limit(index + length).position(index);
            data.getBytes(from, copyView);
        }
    }

    private void growRecords() {
        final int length = recordType.length * 2;
        recordType = Arrays.copyOf(recordType, length);
        recordSegment = Arrays.copyOf(recordSegment, length);
        recordOffset = Arrays.copyOf(recordOffset, length);
        recordLength = Arrays.copyOf(recordLength, length);
        recordPosition = Arrays.copyOf(recordPosition, length);
        recordName = Arrays.copyOf(recordName, length);
    }

    /** Records not yet applied: written ones waiting for their force, then those in the buffer. */
    int recordCount() {
        return recordCount;
    }

    /** Records in the buffer, not written yet (a cut tail, or records gathering). */
    int bufferedRecords() {
        return recordCount - writtenRecords;
    }

    byte type(final int i) {
        return recordType[i];
    }

    int segment(final int i) {
        return recordSegment[i];
    }

    long offset(final int i) {
        return recordOffset[i];
    }

    int length(final int i) {
        return recordLength[i];
    }

    long position(final int i) {
        return recordPosition[i];
    }

    /** The name of record {@code i} (CREATE), dropped: the caller keeps it. */
    byte[] takeName(final int i) {
        final byte[] name = recordName[i];
        recordName[i] = null;
        return name;
    }

    /** Forgets the first {@code count} records: they were applied. */
    void dropApplied(final int count) {
        if (count == 0) {
            return;
        }
        final int rest = recordCount - count;
        System.arraycopy(recordType, count, recordType, 0, rest);
        System.arraycopy(recordSegment, count, recordSegment, 0, rest);
        System.arraycopy(recordOffset, count, recordOffset, 0, rest);
        System.arraycopy(recordLength, count, recordLength, 0, rest);
        System.arraycopy(recordPosition, count, recordPosition, 0, rest);
        System.arraycopy(recordName, count, recordName, 0, rest);
        for (int j = rest; j < recordCount; j++) {
            recordName[j] = null;
        }
        recordCount = rest;
        writtenRecords = Math.max(0, writtenRecords - count);
    }

    // ------------------------------------------------------------------------------------------
    // Writes
    // ------------------------------------------------------------------------------------------

    /**
     * Pads the buffer's records to the next page boundary with a padding record.
     *
     * @return the length to write: 0 if the buffer is empty.
     */
    int padEnd() {
        final int end = align(used, PAGE_LENGTH);
        final int gap = end - used;
        if (gap > 0) {
            LogRecordDescriptor.putPadding(ub, used, gap);
            ub.setMemory(used + PADDING_HEADER_LENGTH, gap - PADDING_HEADER_LENGTH, (byte)0);
            pendingPaddingBytes += gap;
        }
        return end;
    }

    /**
     * @return the length to write when the batch is cut at its last page boundary (the rest is
     *         carried); 0 if it holds less than a page: then nothing is new any more, the records
     *         wait for the requests queued behind them, or are written padded if none are.
     */
    int cutEnd() {
        final int end = used & -PAGE_LENGTH;
        if (end == 0) {
            newRecords = false;
        }
        return end;
    }

    /**
     * @return the buffer's first {@code end} bytes, to write.
     */
    ByteBuffer view(final int end) {
        writeView.limit(end).position(0);
        return writeView;
    }

    /**
     * The buffer's first {@code end} bytes are written at {@code filePosition}: the records they
     * hold wait for their force (if not applied yet), the rest (a cut tail, less than a page)
     * moves to the head; back to the batch buffer after a long append.
     */
    void written(final int end, final long filePosition) {
        final long writtenEnd = filePosition + end;
        while (writtenRecords < recordCount
            && recordPosition[writtenRecords] + alignedLength(recordLength[writtenRecords]) <= writtenEnd) {
            writtenRecords++;
        }
        final int carry = used - end;
        if (carry > 0) {
            // end >= 4096 > carry: the ranges do not overlap.
            ub.putBytes(0, ub, end, carry);
            used = carry;
        } else {
            used = 0;
        }
        durablePrefix = 0;
        newRecords = false;
        if (buffer != batchBuffer && used + PAGE_LENGTH <= batchCapacity) {
            shrink();
        }
    }

    /** @return payload bytes of the records since the last call. */
    long takePayloadBytes() {
        final long bytes = pendingPayloadBytes;
        pendingPayloadBytes = 0;
        return bytes;
    }

    /** @return padding bytes since the last call. */
    long takePaddingBytes() {
        final long bytes = pendingPaddingBytes;
        pendingPaddingBytes = 0;
        return bytes;
    }

    /**
     * Drops every record not written (the writer failed): the buffer holds only its durable
     * prefix again.
     */
    void discard() {
        for (int i = 0; i < recordCount; i++) {
            recordName[i] = null;
        }
        recordCount = 0;
        writtenRecords = 0;
        used = durablePrefix;
        newRecords = false;
        pendingPayloadBytes = 0;
        pendingPaddingBytes = 0;
    }

    /**
     * Empties the buffer for a new file.
     */
    void reset() {
        used = 0;
        durablePrefix = 0;
    }

    /**
     * @return the buffer's first {@code extent} bytes (whole pages) with everything after the
     *         durable prefix zeroed, but for a padding record over the rest of the prefix's page:
     *         what a write that failed over them is repaired with ({@link #padAfterPrefix}).
     */
    ByteBuffer zeroedAfterPrefix(final int extent) {
        ub.setMemory(durablePrefix, extent - durablePrefix, (byte)0);
        padAfterPrefix(durablePrefix);
        return view(extent);
    }

    /**
     * Starts the buffer with the valid bytes of a resumed tail page, which are durable already,
     * and makes {@code [page, zeroEnd)} of {@code file} hold those bytes, a padding record to the
     * end of their page ({@link #padAfterPrefix}), then zeros (a torn batch may have left records
     * there). The caller forces the file. {@code zeroEnd} covers the prefix's page.
     *
     * <p>Only the pages that differ on disk are written ({@link #writeDiffering}): a span the file
     * system holds as a hole or as zeros already (a clean close, a file never pre-written, whose
     * length alone was set) is read, not written, so resuming a log needs no free space (a write
     * of zeros into a hole allocates blocks: a log reopened on a nearly full disk once failed
     * with "No space left on device" pre-writing 16 MiB of zeros past its tail).
     */
    void resume(final LogFile file, final long page, final long zeroEnd, final byte[] prefix) throws IOException {
        if (prefix.length > 0 && zeroEnd < page + PAGE_LENGTH) {
            throw new IllegalArgumentException("zeroEnd=" + zeroEnd + " does not cover the page at " + page + " the prefix of "
                + prefix.length + " bytes starts");
        }
        ub.setMemory(0, capacity, (byte)0);
        ub.putBytes(0, prefix);
        padAfterPrefix(prefix.length);
        for (long at = page; at < zeroEnd; ) {
            final int chunk = (int)Math.min(capacity, zeroEnd - at);
            writeDiffering(file, chunk, at);
            if (at == page) {
                ub.setMemory(0, prefix.length + PADDING_HEADER_LENGTH, (byte)0);
            }
            at += chunk;
        }
        ub.putBytes(0, prefix);
        used = prefix.length;
        durablePrefix = prefix.length;
    }

    /**
     * Writes the pages of the buffer's first {@code length} bytes that differ from the file's
     * bytes at {@code position}, read first through a small aligned buffer (a read past the
     * file's end counts as different); consecutive differing pages go in one write.
     */
    private void writeDiffering(final LogFile file, final int length, final long position) throws IOException {
        if (compareBuffer == null) {
            compareBuffer = BufferUtil.allocateDirectAligned(COMPARE_LENGTH, PAGE_LENGTH);
        }
        final UnsafeBuffer disk = new UnsafeBuffer(compareBuffer);
        int runStart = -1;
        for (int from = 0; from < length; from += COMPARE_LENGTH) {
            final int piece = Math.min(COMPARE_LENGTH, length - from);
            compareBuffer.clear().limit(piece);
            int read = 0;
            while (compareBuffer.hasRemaining()) {
                final int n = file.read(compareBuffer, position + from + read);
                if (n < 0) {
                    break;
                }
                read += n;
            }
            for (int pageAt = 0; pageAt < piece; pageAt += PAGE_LENGTH) {
                final int pageLength = Math.min(PAGE_LENGTH, piece - pageAt);
                final boolean same = pageAt + pageLength <= read && samePage(disk, pageAt, from + pageAt, pageLength);
                if (!same && runStart < 0) {
                    runStart = from + pageAt;
                } else if (same && runStart >= 0) {
                    writeRange(file, runStart, from + pageAt, position);
                    runStart = -1;
                }
            }
        }
        if (runStart >= 0) {
            writeRange(file, runStart, length, position);
        }
    }

    private boolean samePage(final UnsafeBuffer disk, final int diskAt, final int at, final int pageLength) {
        int i = 0;
        for (; i + Long.BYTES <= pageLength; i += Long.BYTES) {
            if (disk.getLong(diskAt + i) != ub.getLong(at + i)) {
                return false;
            }
        }
        for (; i < pageLength; i++) {
            if (disk.getByte(diskAt + i) != ub.getByte(at + i)) {
                return false;
            }
        }
        return true;
    }

    private void writeRange(final LogFile file, final int from, final int to, final long position) throws IOException {
        final ByteBuffer range = buffer.duplicate();
        range.limit(to).position(from);
        while (range.hasRemaining()) {
            file.write(range, position + range.position());
        }
    }

    /**
     * After a durable prefix that ends inside its page, the rest of the page on disk is a
     * padding record, never zeros: the page is then a valid end of the log whatever the writer
     * does next. The next write rewrites the page with the prefix and the records after it; but
     * if the next record does not fit in the file, the writer rolls to the next one and never
     * writes this page again, and zeros inside a page of a file that later files follow are
     * damage to recovery (a repair that moved the end back into a page, then a roll).
     * A crash before the next write leaves no torn tail either.
     */
    private void padAfterPrefix(final int prefix) {
        if (prefix > 0) {
            LogRecordDescriptor.putPadding(ub, prefix, PAGE_LENGTH - prefix);
        }
    }

    /**
     * Moves the buffer's {@link #used} bytes into a buffer of at least {@code length} bytes and a
     * page (the kept long buffer if it is long enough, else a new one, kept for the next long
     * append): a long append's record is built there and written with the batch it ends.
     */
    void growFor(final int length) {
        final int needed = align(length, PAGE_LENGTH) + PAGE_LENGTH;
        if (longBuffer == null || longBuffer.capacity() < needed) {
            longBuffer = BufferUtil.allocateDirectAligned(needed, PAGE_LENGTH);
        }
        final UnsafeBuffer from = ub;
        final int bytes = used;
        use(longBuffer);
        ub.putBytes(0, from, 0, bytes);
    }

    /** Back to the batch buffer once a long append is written: the carried tail (less than a page) moves over. */
    private void shrink() {
        final UnsafeBuffer from = ub;
        use(batchBuffer);
        ub.putBytes(0, from, 0, used);
    }

    /** Makes {@code target} the batch buffer in use. */
    private void use(final ByteBuffer target) {
        buffer = target;
        ub = new UnsafeBuffer(target);
        writeView = target.duplicate();
        crcView = target.duplicate();
        copyView = target.duplicate();
        capacity = target.capacity();
    }

    // ------------------------------------------------------------------------------------------
    // State
    // ------------------------------------------------------------------------------------------

    int used() {
        return used;
    }

    /** Bytes at the buffer's head that are durable already: a resumed or rewound tail page's valid bytes. */
    int durablePrefix() {
        return durablePrefix;
    }

    int capacity() {
        return capacity;
    }

    boolean hasNewRecords() {
        return newRecords;
    }

    long firstNewNanos() {
        return firstNewNanos;
    }

    /** The buffer in use, for a SNAPSHOT that fits it (written before any record). */
    ByteBuffer buffer() {
        return buffer;
    }

    UnsafeBuffer unsafeBuffer() {
        return ub;
    }

    CRC32C crc() {
        return crc;
    }
}
