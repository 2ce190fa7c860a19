package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationRows;
import io.streamcache.log.internal.location.LocationMemory;

import io.streamcache.log.internal.LogFileDescriptor;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The recovery checkpoint of a log directory (the file {@code CHECKPOINT}): the state recovery's
 * replay reaches after every file before file F, so that an open replays only F and the files
 * after it. Written by the {@link Checkpointer} in the background, read by {@link LogRecovery};
 * a value read once, not thread-safe.
 *
 * <h2>Layout</h2>
 * All integers little-endian; a header, then a body of variable length.
 * <pre>
 *  header (64 bytes):
 *   0               1               2               3
 *   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 *  +---------------------------------------------------------------+
 *  |                  MAGIC (u64) "SCCKPT\0\1"                     |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  VERSION (u32) = 1                            |  8
 *  +---------------------------------------------------------------+
 *  |                  reserved (u32) = 0                           |  12
 *  +---------------------------------------------------------------+
 *  |                  FILE_NUMBER (u64): F, the first file not     |  16
 *  |                  covered; replay starts at its SNAPSHOT       |
 *  +---------------------------------------------------------------+
 *  |                  FILE_EPOCH (u64): F's header EPOCH           |  24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  MAX_EPOCH (u64): highest EPOCH of the        |  32
 *  |                  covered files                                |
 *  +---------------------------------------------------------------+
 *  |                  MAX_SEGMENT_ID (u64): highest id ever used   |  40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  BODY_LENGTH (u64)                            |  48
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  BODY_CRC (u32): CRC32C of the body           |  56
 *  +---------------------------------------------------------------+
 *  |                  HEADER_CRC (u32): CRC32C of bytes [0, 60)    |  60
 *  +---------------------------------------------------------------+
 *
 *  body:
 *   FILE_COUNT (u32), SEGMENT_COUNT (u32)
 *   FILE_COUNT x covered file, in number order (files before F the replay read):
 *     NUMBER (u64), EPOCH (u64), FILE_LENGTH (u64), END_POSITION (u64), RECORD_COUNT (u64),
 *     DATA_LENGTH (u64), END (u32: 0 END_OF_FILE, 1 ZEROS, 2 STALE), ENDS (u32),
 *     ENDS x { SEGMENT_ID (u32), END_OFFSET (u64) }       last DATA end per live segment in it
 *   SEGMENT_COUNT x live segment:
 *     SEGMENT_ID (u32), FLAGS (u32, bit 0 sealed), START (u64), LENGTH (u64),
 *     LOGGED_FROM (u64), LOGGED_FROM_FILE (u64)            where the files' bytes of it begin
 *     INDEX_START (u64), FIRST_OFFSET (u64)                location index: start, first record
 *     RECORDS (u32), BELOW (u32), NAME_LENGTH (u32), NAME (UTF-8)
 *     RECORDS x { LENGTH (u32), POSITION / 8 (u32), FILE (u64) }   offsets follow from FIRST_OFFSET
 *     BELOW x { OFFSET (u64), LENGTH (u64), FILE (u64), POSITION (u64) }   copies held aside
 * </pre>
 *
 * <h2>Validity</h2>
 * {@link #read} refuses a file whose magic, version, header CRC, length or body CRC do not
 * check; {@link #check} refuses one that does not match the directory: F must be there with
 * FILE_EPOCH in its header, and every log file numbered below F must be a covered file with the
 * same EPOCH and FILE_LENGTH (covered files may be missing: compaction deletes dead files; the
 * replay then checks that no live byte is located in one). Refused means: log why and scan
 * every file.
 */
final class RecoveryCheckpoint {
    static final String FILE_NAME = "CHECKPOINT";
    static final String TEMP_NAME = "CHECKPOINT.tmp";
    /** "SCCKPT\0\1" read as a little-endian u64. */
    static final long MAGIC = 0x0100_5450_4B43_4353L;
    static final int VERSION = 1;
    static final int HEADER_LENGTH = 64;
    static final int VERSION_OFFSET = 8;
    static final int FILE_NUMBER_OFFSET = 16;
    static final int FILE_EPOCH_OFFSET = 24;
    static final int MAX_EPOCH_OFFSET = 32;
    static final int MAX_SEGMENT_ID_OFFSET = 40;
    static final int BODY_LENGTH_OFFSET = 48;
    static final int BODY_CRC_OFFSET = 56;
    static final int HEADER_CRC_OFFSET = 60;
    private static final ScanEnd[] ENDS = {ScanEnd.END_OF_FILE, ScanEnd.ZEROS, ScanEnd.STALE};
    private static final int WRITE_CHUNK = 1 << 20;

    /** Why a checkpoint is not used: the open scans every file instead. */
    static final class Refused extends Exception {
        Refused(final String message) {
            super(message, null, false, false);
        }
    }

    /**
     * A file the checkpoint covers, as the checkpoint's replay of it found it.
     */
    record CoveredFile(long number, long epoch, long fileLength, ScanEnd end, long endPosition, long recordCount,
                       long dataLength) {
        static CoveredFile of(final LogFileScan scan) {
            return new CoveredFile(scan.fileNumber(), scan.epoch(), scan.fileLength(), scan.end(), scan.endPosition(),
                scan.recordCount(), scan.dataLength());
        }

        LogFileScan toScan() {
            return LogFileScan.covered(number, fileLength, epoch, end, endPosition, recordCount, dataLength);
        }
    }

    private final Path path;
    private final long fileNumber;
    private final long fileEpoch;
    private final long maxEpoch;
    private final long maxSegmentId;
    private final UnsafeBuffer body;
    private final int bodyLength;

    private RecoveryCheckpoint(final Path path, final UnsafeBuffer header, final UnsafeBuffer body, final int bodyLength) {
        this.path = path;
        this.fileNumber = header.getLong(FILE_NUMBER_OFFSET, ByteOrder.LITTLE_ENDIAN);
        this.fileEpoch = header.getLong(FILE_EPOCH_OFFSET, ByteOrder.LITTLE_ENDIAN);
        this.maxEpoch = header.getLong(MAX_EPOCH_OFFSET, ByteOrder.LITTLE_ENDIAN);
        this.maxSegmentId = header.getLong(MAX_SEGMENT_ID_OFFSET, ByteOrder.LITTLE_ENDIAN);
        this.body = body;
        this.bodyLength = bodyLength;
    }

    /** @return F: the first file not covered. */
    long fileNumber() {
        return fileNumber;
    }

    long fileEpoch() {
        return fileEpoch;
    }

    long maxEpoch() {
        return maxEpoch;
    }

    @Override
    public String toString() {
        return path + " (fileNumber=" + fileNumber + " epoch=" + fileEpoch + ", body bytes=" + bodyLength + ")";
    }

    // ------------------------------------------------------------------------------------------
    // Reading
    // ------------------------------------------------------------------------------------------

    /**
     * Reads and checks the directory's checkpoint (magic, version, CRCs); the body is mapped,
     * not copied.
     *
     * @return null if there is none.
     * @throws Refused if it does not validate or cannot be read.
     */
    static RecoveryCheckpoint read(final Path directory) throws Refused {
        final Path path = directory.resolve(FILE_NAME);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            final long size = channel.size();
            if (size < HEADER_LENGTH) {
                throw new Refused(path + ": size=" + size + " is shorter than its header");
            }
            final MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
            final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
            if (header.getLong(0, ByteOrder.LITTLE_ENDIAN) != MAGIC) {
                throw new Refused(path + ": bad magic");
            }
            final CRC32C crc = new CRC32C();
            crc.update(mapped.duplicate().position(0).limit(HEADER_CRC_OFFSET));
            if ((int) crc.getValue() != header.getInt(HEADER_CRC_OFFSET, ByteOrder.LITTLE_ENDIAN)) {
                throw new Refused(path + ": header CRC does not match");
            }
            final int version = header.getInt(VERSION_OFFSET, ByteOrder.LITTLE_ENDIAN);
            if (version != VERSION) {
                throw new Refused(path + ": version=" + version + ", this build reads version=" + VERSION);
            }
            final long bodyLength = header.getLong(BODY_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN);
            if (bodyLength != size - HEADER_LENGTH) {
                throw new Refused(path + ": BODY_LENGTH=" + bodyLength + ", but the file holds " + (size - HEADER_LENGTH)
                    + " bytes after the header");
            }
            crc.reset();
            crc.update(mapped.duplicate().position(HEADER_LENGTH).limit((int) size));
            if ((int) crc.getValue() != header.getInt(BODY_CRC_OFFSET, ByteOrder.LITTLE_ENDIAN)) {
                throw new Refused(path + ": body CRC does not match");
            }
            return new RecoveryCheckpoint(path, header, new UnsafeBuffer(mapped, HEADER_LENGTH, (int) bodyLength),
                (int) bodyLength);
        } catch (final NoSuchFileException e) {
            return null;
        } catch (final IOException | RuntimeException e) {
            throw new Refused(path + ": cannot be read: " + e);
        }
    }

    /**
     * @return F of the directory's checkpoint if its header validates (magic, header CRC,
     *         version; the body is not read), else -1: whether the checkpoint on disk is still
     *         the one a {@link Checkpointer} wrote.
     */
    static long fileNumberOnDisk(final Path directory) {
        final ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel channel = FileChannel.open(directory.resolve(FILE_NAME), StandardOpenOption.READ)) {
            while (header.hasRemaining() && channel.read(header, header.position()) > 0) {
                // read the header
            }
        } catch (final IOException e) {
            return -1;
        }
        if (header.position() < HEADER_LENGTH || header.getLong(0) != MAGIC || header.getInt(VERSION_OFFSET) != VERSION) {
            return -1;
        }
        final CRC32C crc = new CRC32C();
        crc.update(header.duplicate().position(0).limit(HEADER_CRC_OFFSET));
        return (int) crc.getValue() == header.getInt(HEADER_CRC_OFFSET) ? header.getLong(FILE_NUMBER_OFFSET) : -1;
    }

    /**
     * Checks the checkpoint against the directory's log files (see the class comment).
     *
     * @param numbers the log files in the directory, in number order.
     * @throws Refused if it does not match.
     */
    void check(final Path directory, final List<Long> numbers) throws Refused {
        check(path, directory, numbers, fileNumber, fileEpoch, coveredFiles());
    }

    /**
     * The check of {@link #check(Path, List)} for a checkpoint's state held in memory (the
     * {@link Checkpointer} continues from the one it wrote without reading it back): F must be in
     * the directory with {@code fileEpoch} in its header, and every log file numbered below F
     * must be one of {@code coveredFiles} with the same EPOCH and FILE_LENGTH.
     *
     * @param path what the errors name.
     * @throws Refused if the directory does not match.
     */
    static void check(final Path path, final Path directory, final List<Long> numbers, final long fileNumber,
                      final long fileEpoch, final List<CoveredFile> coveredFiles) throws Refused {
        if (!numbers.contains(fileNumber)) {
            throw new Refused(path + ": its fileNumber=" + fileNumber + " is not in the directory");
        }
        final Map<Long, CoveredFile> covered = new TreeMap<>();
        for (final CoveredFile file : coveredFiles) {
            covered.put(file.number(), file);
        }
        final ByteBuffer page = ByteBuffer.allocate(LogFileDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        for (final long number : numbers) {
            if (number > fileNumber) {
                break;
            }
            final CoveredFile file = covered.get(number);
            if (number < fileNumber && file == null) {
                throw new Refused(path + ": fileNumber=" + number + " is in the directory, before the checkpoint's fileNumber="
                    + fileNumber + ", but the checkpoint does not cover it");
            }
            final long expectedEpoch = number == fileNumber ? fileEpoch : file.epoch();
            final Path logFile = directory.resolve(LogFileDescriptor.fileName(number));
            try (FileChannel channel = FileChannel.open(logFile, StandardOpenOption.READ)) {
                page.clear();
                while (page.hasRemaining() && channel.read(page, page.position()) > 0) {
                    // read the header
                }
            } catch (final IOException e) {
                throw new Refused(path + ": cannot read the header of " + logFile + ": " + e);
            }
            final UnsafeBuffer header = new UnsafeBuffer(page);
            if (page.position() < LogFileDescriptor.HEADER_LENGTH
                || header.getLong(LogFileDescriptor.FILE_MAGIC_OFFSET, ByteOrder.LITTLE_ENDIAN) != LogFileDescriptor.FILE_MAGIC
                || header.getLong(LogFileDescriptor.FILE_NUMBER_OFFSET, ByteOrder.LITTLE_ENDIAN) != number
                || LogFileDescriptor.headerCrc(header, 0) != header.getInt(LogFileDescriptor.HEADER_CRC_OFFSET, ByteOrder.LITTLE_ENDIAN)) {
                throw new Refused(path + ": the header of " + logFile + " does not validate");
            }
            final long epoch = header.getLong(LogFileDescriptor.EPOCH_OFFSET, ByteOrder.LITTLE_ENDIAN);
            final long length = header.getLong(LogFileDescriptor.FILE_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN);
            if (epoch != expectedEpoch || (file != null && number < fileNumber && length != file.fileLength())) {
                throw new Refused(path + ": " + logFile + " has EPOCH=" + epoch + " FILE_LENGTH=" + length + ", the checkpoint"
                    + " says EPOCH=" + expectedEpoch + (file != null ? " FILE_LENGTH=" + file.fileLength() : "")
                    + " (a file by that number was written again)");
            }
        }
    }

    /**
     * @return the covered files as listed (decodes the file part of the body).
     */
    List<CoveredFile> coveredFiles() throws Refused {
        try {
            final int count = body.getInt(0, ByteOrder.LITTLE_ENDIAN);
            final List<CoveredFile> files = new ArrayList<>(count);
            int at = 8;
            for (int i = 0; i < count; i++) {
                files.add(coveredFile(at));
                at += 56 + 12 * body.getInt(at + 52, ByteOrder.LITTLE_ENDIAN);
            }
            return files;
        } catch (final RuntimeException e) {
            throw new Refused(path + ": malformed body: " + e);
        }
    }

    private CoveredFile coveredFile(final int at) throws Refused {
        final int end = body.getInt(at + 48, ByteOrder.LITTLE_ENDIAN);
        if (end < 0 || end >= ENDS.length) {
            throw new Refused(path + ": malformed body: END=" + end);
        }
        return new CoveredFile(body.getLong(at, ByteOrder.LITTLE_ENDIAN), body.getLong(at + 8, ByteOrder.LITTLE_ENDIAN),
            body.getLong(at + 16, ByteOrder.LITTLE_ENDIAN), ENDS[end], body.getLong(at + 24, ByteOrder.LITTLE_ENDIAN),
            body.getLong(at + 32, ByteOrder.LITTLE_ENDIAN), body.getLong(at + 40, ByteOrder.LITTLE_ENDIAN));
    }

    /**
     * Puts the checkpoint's state into a fresh replay: the live segments with their location
     * indexes, the highest segment id, and the DATA ends of each covered file in {@code present}.
     *
     * @return the covered files in {@code present}, in number order, in step with the
     *         {@link LogReplay#fileEnds} added.
     * @throws Refused if the body is malformed.
     */
    List<CoveredFile> restore(final LogReplay replay, final Set<Long> present) throws Refused {
        try {
            final int fileCount = body.getInt(0, ByteOrder.LITTLE_ENDIAN);
            final int segmentCount = body.getInt(4, ByteOrder.LITTLE_ENDIAN);
            replay.reserve(segmentCount);
            int at = 8;
            final int filesAt = at;
            for (int i = 0; i < fileCount; i++) {
                at += 56 + 12 * body.getInt(at + 52, ByteOrder.LITTLE_ENDIAN);
            }
            for (int i = 0; i < segmentCount; i++) {
                at = restoreSegment(replay, at);
            }
            if (at != bodyLength) {
                throw new Refused(path + ": malformed body: it ends at " + at + " of " + bodyLength + " bytes");
            }
            replay.restoreMaxSegmentId(maxSegmentId);
            final List<CoveredFile> files = new ArrayList<>();
            at = filesAt;
            for (int i = 0; i < fileCount; i++) {
                final CoveredFile file = coveredFile(at);
                final int ends = body.getInt(at + 52, ByteOrder.LITTLE_ENDIAN);
                at += 56;
                if (present.contains(file.number())) {
                    final FileEnds fileEnds = new FileEnds(ends);
                    for (int j = 0; j < ends; j++) {
                        final SegmentState segment = replay.liveState(body.getInt(at + 12 * j, ByteOrder.LITTLE_ENDIAN));
                        if (segment != null) {
                            fileEnds.note(segment, body.getLong(at + 12 * j + 4, ByteOrder.LITTLE_ENDIAN));
                        }
                    }
                    replay.fileEnds.add(fileEnds);
                    files.add(file);
                }
                at += 12 * ends;
            }
            return files;
        } catch (final RuntimeException e) {
            throw new Refused(path + ": malformed body: " + e);
        }
    }

    private int restoreSegment(final LogReplay replay, final int from) {
        int at = from;
        final int id = body.getInt(at, ByteOrder.LITTLE_ENDIAN);
        final boolean sealed = (body.getInt(at + 4, ByteOrder.LITTLE_ENDIAN) & 1) != 0;
        final long start = body.getLong(at + 8, ByteOrder.LITTLE_ENDIAN);
        final long length = body.getLong(at + 16, ByteOrder.LITTLE_ENDIAN);
        final long loggedFrom = body.getLong(at + 24, ByteOrder.LITTLE_ENDIAN);
        final long loggedFromFile = body.getLong(at + 32, ByteOrder.LITTLE_ENDIAN);
        final long indexStart = body.getLong(at + 40, ByteOrder.LITTLE_ENDIAN);
        final long firstOffset = body.getLong(at + 48, ByteOrder.LITTLE_ENDIAN);
        final int records = body.getInt(at + 56, ByteOrder.LITTLE_ENDIAN);
        final int belowCount = body.getInt(at + 60, ByteOrder.LITTLE_ENDIAN);
        final int nameLength = body.getInt(at + 64, ByteOrder.LITTLE_ENDIAN);
        at += 68;
        final byte[] name = new byte[nameLength];
        body.getBytes(at, name);
        at += nameLength;
        final LocationMemory memory = replay.memory();
        final long index = LocationRows.allocate(memory, records == 0 ? indexStart : firstOffset);
        long offset = firstOffset;
        for (int i = 0; i < records; i++) {
            final int recordLength = body.getInt(at, ByteOrder.LITTLE_ENDIAN);
            final long position = Integer.toUnsignedLong(body.getInt(at + 4, ByteOrder.LITTLE_ENDIAN)) << LocationIndex.POSITION_SHIFT;
            LocationRows.add(memory, index, offset, recordLength, body.getLong(at + 8, ByteOrder.LITTLE_ENDIAN), position);
            offset += recordLength;
            at += 16;
        }
        LocationRows.truncate(memory, index, indexStart);
        TreeMap<Long, long[]> below = null;
        if (belowCount > 0) {
            below = new TreeMap<>();
            for (int i = 0; i < belowCount; i++) {
                below.put(body.getLong(at, ByteOrder.LITTLE_ENDIAN), new long[] {body.getLong(at + 8, ByteOrder.LITTLE_ENDIAN),
                    body.getLong(at + 16, ByteOrder.LITTLE_ENDIAN), body.getLong(at + 24, ByteOrder.LITTLE_ENDIAN)});
                at += 32;
            }
        }
        replay.restoreSegment(id, new String(name, StandardCharsets.UTF_8), start, length, sealed, loggedFrom, loggedFromFile,
            index, below);
        return at;
    }

    // ------------------------------------------------------------------------------------------
    // Writing
    // ------------------------------------------------------------------------------------------

    /**
     * Writes a checkpoint of {@code replay} (its state before file {@code fileNumber}) atomically:
     * {@code CHECKPOINT.tmp} written and forced, renamed over {@code CHECKPOINT}, the directory
     * forced. A crash at any point leaves the old checkpoint or the new one, whole.
     *
     * @param files the covered files, in step with {@code replay.fileEnds}.
     * @return the checkpoint's length in bytes.
     */
    static long write(final Path directory, final long fileNumber, final long fileEpoch, final long maxEpoch,
                      final LogReplay replay, final List<CoveredFile> files) throws IOException {
        final Path temp = directory.resolve(TEMP_NAME);
        final long length;
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            final BodyWriter out = new BodyWriter(channel);
            final List<SegmentState> live = new ArrayList<>();
            replay.liveStates().forEach(live::add);
            out.putInt(files.size());
            out.putInt(live.size());
            for (int i = 0; i < files.size(); i++) {
                final CoveredFile file = files.get(i);
                final FileEnds ends = replay.fileEnds.get(i);
                int liveEnds = 0;
                for (int j = 0; j < ends.size(); j++) {
                    liveEnds += ends.segment(j).deleted ? 0 : 1;
                }
                out.putLong(file.number());
                out.putLong(file.epoch());
                out.putLong(file.fileLength());
                out.putLong(file.endPosition());
                out.putLong(file.recordCount());
                out.putLong(file.dataLength());
                out.putInt(endCode(file.end()));
                out.putInt(liveEnds);
                for (int j = 0; j < ends.size(); j++) {
                    if (!ends.segment(j).deleted) {
                        out.putInt(ends.segment(j).id);
                        out.putLong(ends.end(j));
                    }
                }
            }
            for (final SegmentState segment : live) {
                putSegment(out, segment);
            }
            out.flush();
            final long bodyLength = out.written;
            final ByteBuffer headerBytes = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            headerBytes.putLong(0, MAGIC).putInt(VERSION_OFFSET, VERSION).putInt(12, 0).putLong(FILE_NUMBER_OFFSET, fileNumber)
                .putLong(FILE_EPOCH_OFFSET, fileEpoch).putLong(MAX_EPOCH_OFFSET, maxEpoch)
                .putLong(MAX_SEGMENT_ID_OFFSET, replay.maxSegmentId).putLong(BODY_LENGTH_OFFSET, bodyLength)
                .putInt(BODY_CRC_OFFSET, (int) out.crc.getValue());
            final CRC32C crc = new CRC32C();
            crc.update(headerBytes.duplicate().position(0).limit(HEADER_CRC_OFFSET));
            headerBytes.putInt(HEADER_CRC_OFFSET, (int) crc.getValue());
            writeFully(channel, headerBytes, 0);
            channel.force(true);
            length = HEADER_LENGTH + bodyLength;
        }
        Files.move(temp, directory.resolve(FILE_NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (final IOException | UnsupportedOperationException e) {
            // Some file systems cannot force a directory; the rename is then as durable as they make it.
        }
        return length;
    }

    private static void putSegment(final BodyWriter out, final SegmentState segment) throws IOException {
        final long index = segment.locations;
        final int records = LocationRows.count(index);
        final byte[] name = segment.name.getBytes(StandardCharsets.UTF_8);
        final long[] first = {-1};
        LocationRows.forEach(index, (offset, length, file, position) -> {
            if (first[0] < 0) {
                first[0] = offset;
            }
        });
        out.putInt(segment.id);
        out.putInt(segment.sealed ? 1 : 0);
        out.putLong(segment.start);
        out.putLong(segment.length);
        out.putLong(segment.loggedFrom);
        out.putLong(segment.loggedFromFile);
        out.putLong(LocationRows.startOffset(index));
        out.putLong(first[0] < 0 ? LocationRows.startOffset(index) : first[0]);
        out.putInt(records);
        out.putInt(segment.below == null ? 0 : segment.below.size());
        out.putInt(name.length);
        out.putBytes(name);
        final IOException[] failure = {null};
        LocationRows.forEach(index, (offset, length, file, position) -> {
            try {
                out.putInt(length);
                out.putInt((int) (position >>> LocationIndex.POSITION_SHIFT));
                out.putLong(file);
            } catch (final IOException e) {
                failure[0] = e;
            }
        });
        if (failure[0] != null) {
            throw failure[0];
        }
        if (segment.below != null) {
            for (final Map.Entry<Long, long[]> entry : segment.below.entrySet()) {
                out.putLong(entry.getKey());
                out.putLong(entry.getValue()[0]);
                out.putLong(entry.getValue()[1]);
                out.putLong(entry.getValue()[2]);
            }
        }
    }

    private static int endCode(final ScanEnd end) {
        for (int i = 0; i < ENDS.length; i++) {
            if (ENDS[i] == end) {
                return i;
            }
        }
        throw new IllegalArgumentException("a covered file cannot end " + end);
    }

    private static void writeFully(final FileChannel channel, final ByteBuffer buffer, final long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            at += channel.write(buffer, at);
        }
    }

    /** Writes the body in chunks after the header's place, keeping its CRC32C. */
    private static final class BodyWriter {
        private final FileChannel channel;
        private final ByteBuffer chunk = ByteBuffer.allocateDirect(WRITE_CHUNK).order(ByteOrder.LITTLE_ENDIAN);
        private final CRC32C crc = new CRC32C();
        private long written;

        BodyWriter(final FileChannel channel) {
            this.channel = channel;
        }

        void putInt(final int value) throws IOException {
            room(Integer.BYTES);
            chunk.putInt(value);
        }

        void putLong(final long value) throws IOException {
            room(Long.BYTES);
            chunk.putLong(value);
        }

        void putBytes(final byte[] bytes) throws IOException {
            int at = 0;
            while (at < bytes.length) {
                room(1);
                final int n = Math.min(chunk.remaining(), bytes.length - at);
                chunk.put(bytes, at, n);
                at += n;
            }
        }

        private void room(final int bytes) throws IOException {
            if (chunk.remaining() < bytes) {
                flush();
            }
        }

        void flush() throws IOException {
            chunk.flip();
            crc.update(chunk.duplicate());
            final int n = chunk.remaining();
            writeFully(channel, chunk, HEADER_LENGTH + written);
            written += n;
            chunk.clear();
        }
    }
}
