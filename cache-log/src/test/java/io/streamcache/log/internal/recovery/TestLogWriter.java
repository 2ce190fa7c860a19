package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;

/**
 * A tiny log writer for tests that follows the descriptors: files pre-written with zeros, a
 * header page with its CRC, a SNAPSHOT first, records batched and every batch padded to a page
 * boundary with a PADDING record. It keeps the {@link Model} of what it wrote and a list of the
 * records with their places. Not thread-safe. DATA payloads are {@link #pattern} bytes seeded
 * by the segment id.
 */
public final class TestLogWriter implements AutoCloseable {
    private final Path directory;
    private final long fileLength;
    private final int maxBatchLength;
    private final CRC32C crc = new CRC32C();
    private final ByteBuffer batch;
    private final UnsafeBuffer batchBuffer;
    private final Model model;
    private final List<RecordInfo> records = new ArrayList<>();
    private FileChannel channel;
    private long fileNumber;
    private long writePosition;
    private long batchCount;

    /**
     * Starts a log in an empty directory: file 1 with an empty SNAPSHOT.
     */
    public TestLogWriter(final Path directory, final long fileLength, final int maxBatchLength) throws IOException {
        this(directory, fileLength, maxBatchLength, new Model(), 0, 0);
    }

    private TestLogWriter(final Path directory, final long fileLength, final int maxBatchLength, final Model model,
                          final long tailFileNumber, final long resumePosition) throws IOException {
        this.directory = directory;
        this.fileLength = fileLength;
        this.maxBatchLength = maxBatchLength;
        this.batch = ByteBuffer.allocateDirect(Math.max(maxBatchLength, 1 << 20) + 2 * PAGE_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        this.batchBuffer = new UnsafeBuffer(batch);
        this.model = model;
        if (tailFileNumber == 0) {
            roll();
        } else {
            this.fileNumber = tailFileNumber;
            this.writePosition = resumePosition;
            this.channel = FileChannel.open(path(tailFileNumber), StandardOpenOption.READ, StandardOpenOption.WRITE);
            if (resumePosition >= fileLength) {
                roll();
            }
        }
    }

    /**
     * Continues a recovered log: writes at its resume position with the model it recovered to.
     */
    public static TestLogWriter resume(final Path directory, final long fileLength, final int maxBatchLength, final Model model,
                                       final RecoveredLog recovered) throws IOException {
        return new TestLogWriter(directory, fileLength, maxBatchLength, model, recovered.tailFileNumber(),
            recovered.resumePosition());
    }

    // ------------------------------------------------------------------------------------------
    // Operations
    // ------------------------------------------------------------------------------------------

    public void create(final int id, final String name) throws IOException {
        final byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        final int index = reserve(bytes.length);
        batchBuffer.putBytes(index + LogRecordDescriptor.HEADER_LENGTH, bytes);
        finish(index, LogRecordDescriptor.TYPE_CREATE, bytes.length, id, 0, name);
        model.create(id, name);
    }

    /**
     * Appends {@code length} pattern bytes to segment {@code id}.
     */
    public void data(final int id, final int length) throws IOException {
        final long offset = model.segment(id).length;
        final int index = reserve(length);
        batchBuffer.putBytes(index + LogRecordDescriptor.HEADER_LENGTH, pattern(id, offset, length));
        finish(index, LogRecordDescriptor.TYPE_DATA, length, id, offset, null);
        model.data(id, length);
    }

    public void seal(final int id) throws IOException {
        final int index = reserve(0);
        finish(index, LogRecordDescriptor.TYPE_SEAL, 0, id, model.segment(id).length, null);
        model.seal(id);
    }

    public void truncate(final int id, final long offset) throws IOException {
        final int index = reserve(0);
        finish(index, LogRecordDescriptor.TYPE_TRUNCATE, 0, id, offset, null);
        model.truncate(id, offset);
    }

    public void delete(final int id) throws IOException {
        final int index = reserve(0);
        finish(index, LogRecordDescriptor.TYPE_DELETE, 0, id, 0, null);
        model.delete(id);
    }

    /**
     * Appends a compaction copy (DATA with FLAG_COPY) of segment {@code id}'s pattern bytes
     * {@code [offset, offset + length)}; the model is unchanged (a copy adds no byte).
     */
    public void copy(final int id, final long offset, final int length) throws IOException {
        rawFlags(LogRecordDescriptor.TYPE_DATA, LogRecordDescriptor.FLAG_COPY, id, offset, pattern(id, offset, length));
    }

    /**
     * Appends a record with FLAGS {@code flags} as given, bypassing the model.
     */
    public void rawFlags(final byte type, final byte flags, final int id, final long offset, final byte[] payload) throws IOException {
        final int index = reserve(payload.length);
        batchBuffer.putBytes(index + LogRecordDescriptor.HEADER_LENGTH, payload);
        finish(index, type, payload.length, id, offset, null);
        batchBuffer.putByte(index + LogRecordDescriptor.FLAGS_OFFSET, flags);
        final int crcValue = LogRecordDescriptor.crc(crc, fileNumber, batch, index, payload.length);
        batch.limit(batch.capacity()).position(index + LogRecordDescriptor.alignedLength(payload.length));
        batchBuffer.putInt(index + LogRecordDescriptor.CRC_OFFSET, crcValue, ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Appends a record as given, bypassing the model (for corrupt-history tests).
     */
    public void raw(final byte type, final int id, final long offset, final byte[] payload) throws IOException {
        final int index = reserve(payload.length);
        batchBuffer.putBytes(index + LogRecordDescriptor.HEADER_LENGTH, payload);
        finish(index, type, payload.length, id, offset, null);
    }

    /**
     * Pads the batch to the next page boundary and writes it (no force: tests need none).
     */
    public void flush() throws IOException {
        final int length = batch.position();
        if (length == 0) {
            return;
        }
        final int aligned = LogRecordDescriptor.align(length, PAGE_LENGTH);
        if (aligned > length) {
            LogRecordDescriptor.putPadding(batchBuffer, length, aligned - length);
        }
        batch.limit(aligned).position(0);
        long at = writePosition;
        while (batch.hasRemaining()) {
            at += channel.write(batch, at);
        }
        writePosition += aligned;
        batch.clear();
        batchBuffer.setMemory(0, aligned, (byte) 0);
        batchCount++;
    }

    /**
     * Flushes and starts the next file with a SNAPSHOT of the model.
     */
    public void roll() throws IOException {
        flush();
        if (channel != null) {
            channel.close();
        }
        fileNumber++;
        channel = createFile(directory, fileNumber, fileLength);
        writePosition = LogFileDescriptor.FIRST_RECORD_POSITION;
        final List<SnapshotCodec.Entry> entries = model.snapshot();
        final int payloadLength = SnapshotCodec.encodedLength(entries);
        final int index = reserveInFile(payloadLength);
        SnapshotCodec.encode(entries, batchBuffer, index + LogRecordDescriptor.HEADER_LENGTH);
        finish(index, LogRecordDescriptor.TYPE_SNAPSHOT, payloadLength, 0, 0, null);
    }

    /**
     * Creates a file: zeros over its whole length, then its header.
     */
    public static FileChannel createFile(final Path directory, final long fileNumber, final long fileLength) throws IOException {
        final FileChannel channel = FileChannel.open(directory.resolve(LogFileDescriptor.fileName(fileNumber)),
            StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
        final ByteBuffer zeros = ByteBuffer.allocateDirect(64 << 10);
        for (long position = 0; position < fileLength; ) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), fileLength - position));
            position += channel.write(zeros, position);
        }
        final ByteBuffer header = header(fileNumber, fileLength);
        channel.write(header, 0);
        return channel;
    }

    /**
     * @return a valid header page's first bytes for the file.
     */
    public static ByteBuffer header(final long fileNumber, final long fileLength) {
        return header(fileNumber, fileLength, 1);
    }

    /**
     * @return a valid header page's first bytes for the file, written by a writer of that epoch.
     */
    public static ByteBuffer header(final long fileNumber, final long fileLength, final long epoch) {
        final ByteBuffer header = ByteBuffer.allocate(LogFileDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        header.putLong(LogFileDescriptor.FILE_MAGIC_OFFSET, LogFileDescriptor.FILE_MAGIC);
        header.putInt(LogFileDescriptor.VERSION_OFFSET, LogFileDescriptor.VERSION);
        header.putInt(LogFileDescriptor.PAGE_LENGTH_OFFSET, PAGE_LENGTH);
        header.putLong(LogFileDescriptor.FILE_NUMBER_OFFSET, fileNumber);
        header.putLong(LogFileDescriptor.FILE_LENGTH_OFFSET, fileLength);
        header.putLong(LogFileDescriptor.EPOCH_OFFSET, epoch);
        final CRC32C headerCrc = new CRC32C();
        headerCrc.update(header.array(), 0, LogFileDescriptor.HEADER_CRC_OFFSET);
        header.putInt(LogFileDescriptor.HEADER_CRC_OFFSET, (int) headerCrc.getValue());
        return header;
    }

    private int reserve(final int payloadLength) throws IOException {
        final int aligned = LogRecordDescriptor.alignedLength(payloadLength);
        if (batch.position() > 0 && batch.position() + aligned > maxBatchLength) {
            flush();
        }
        // Room for the record and the padding after it in this file, else roll first.
        if (writePosition + LogRecordDescriptor.align((long) batch.position() + aligned, PAGE_LENGTH) > fileLength) {
            roll();
        }
        return reserveInFile(payloadLength);
    }

    private int reserveInFile(final int payloadLength) {
        final int index = batch.position();
        if (writePosition + index + LogRecordDescriptor.alignedLength(payloadLength) > fileLength) {
            throw new IllegalStateException("record of length=" + payloadLength + " does not fit a file of fileLength=" + fileLength);
        }
        batch.position(index + LogRecordDescriptor.alignedLength(payloadLength));
        return index;
    }

    private void finish(final int index, final byte type, final int length, final int id, final long offset, final String name) {
        LogRecordDescriptor.putHeader(batchBuffer, index, type, length, id, offset);
        final int end = batch.position();
        final int crcValue = LogRecordDescriptor.crc(crc, fileNumber, batch, index, length);
        batch.limit(batch.capacity()).position(end);
        batchBuffer.putInt(index + LogRecordDescriptor.CRC_OFFSET, crcValue, ByteOrder.LITTLE_ENDIAN);
        records.add(new RecordInfo(fileNumber, writePosition + index, type, id, offset, length, name));
    }

    /**
     * @return byte {@code offset} of segment {@code seed}: a hash of both, so that a byte from the
     *         wrong place or the wrong segment shows.
     */
    public static byte at(final long seed, final long offset) {
        long z = seed * 0x9E37_79B9_7F4A_7C15L + offset * 0xBF58_476D_1CE4_E5B9L + 0x94D0_49BB_1331_11EBL;
        z = (z ^ (z >>> 31)) * 0x94D0_49BB_1331_11EBL;
        return (byte) (z ^ (z >>> 29));
    }

    /**
     * @return bytes {@code [from, from + length)} of segment {@code seed}.
     */
    public static byte[] pattern(final long seed, final long from, final int length) {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = at(seed, from + i);
        }
        return bytes;
    }

    // ------------------------------------------------------------------------------------------
    // Inspection
    // ------------------------------------------------------------------------------------------

    public Model model() {
        return model;
    }

    public List<RecordInfo> records() {
        return records;
    }

    public long fileNumber() {
        return fileNumber;
    }

    public long writePosition() {
        return writePosition;
    }

    public long batchCount() {
        return batchCount;
    }

    public Path path(final long number) {
        return directory.resolve(LogFileDescriptor.fileName(number));
    }

    @Override
    public void close() throws IOException {
        flush();
        channel.close();
    }

    /**
     * One record written; an immutable value.
     */
    public record RecordInfo(long fileNumber, long position, byte type, int segmentId, long offset, int length, String name) {
        /**
         * @return the end of its bytes (header and payload, before alignment).
         */
        public long end() {
            return position + LogRecordDescriptor.HEADER_LENGTH + length;
        }
    }

    /**
     * The segments as written: applying records in log order. Not thread-safe.
     */
    public static final class Model {
        private final Map<Integer, SegmentModel> segments = new TreeMap<>();

        /**
         * @return the model after the records of {@code records} before index {@code count}.
         */
        public static Model replay(final List<RecordInfo> records, final int count) {
            final Model model = new Model();
            for (int i = 0; i < count; i++) {
                final RecordInfo r = records.get(i);
                switch (r.type()) {
                    case LogRecordDescriptor.TYPE_CREATE -> model.create(r.segmentId(), r.name());
                    case LogRecordDescriptor.TYPE_DATA -> model.data(r.segmentId(), r.length());
                    case LogRecordDescriptor.TYPE_SEAL -> model.seal(r.segmentId());
                    case LogRecordDescriptor.TYPE_TRUNCATE -> model.truncate(r.segmentId(), r.offset());
                    case LogRecordDescriptor.TYPE_DELETE -> model.delete(r.segmentId());
                    default -> {
                    }
                }
            }
            return model;
        }

        void create(final int id, final String name) {
            segments.put(id, new SegmentModel(id, name));
        }

        void data(final int id, final int length) {
            segments.get(id).length += length;
        }

        void seal(final int id) {
            segments.get(id).sealed = true;
        }

        void truncate(final int id, final long offset) {
            final SegmentModel segment = segments.get(id);
            segment.start = Math.max(segment.start, offset);
        }

        void delete(final int id) {
            segments.get(id).deleted = true;
        }

        public SegmentModel segment(final int id) {
            return segments.get(id);
        }

        public Map<Integer, SegmentModel> segments() {
            return segments;
        }

        List<SnapshotCodec.Entry> snapshot() {
            final List<SnapshotCodec.Entry> entries = new ArrayList<>();
            for (final SegmentModel segment : segments.values()) {
                if (!segment.deleted) {
                    entries.add(new SnapshotCodec.Entry(segment.id, segment.sealed, segment.start, segment.length, segment.name));
                }
            }
            return entries;
        }
    }

    /**
     * One segment of the model.
     */
    public static final class SegmentModel {
        public final int id;
        public final String name;
        public long start;
        public long length;
        public boolean sealed;
        public boolean deleted;

        SegmentModel(final int id, final String name) {
            this.id = id;
            this.name = name;
        }

        @Override
        public String toString() {
            return "SegmentModel{id=" + id + ", name=" + name + ", start=" + start + ", length=" + length + ", sealed=" + sealed
                + ", deleted=" + deleted + '}';
        }
    }
}
