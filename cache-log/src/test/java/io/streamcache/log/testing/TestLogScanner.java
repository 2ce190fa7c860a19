package io.streamcache.log.testing;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.PADDING_HEADER_LENGTH;

/**
 * A small, independent reader of log files for the tests: validates the header, walks the records
 * with {@link LogRecordDescriptor}, checks every CRC and every padding record, and stops at the
 * first byte that is not a valid record (the end, or a torn tail). Stateless; thread-safe.
 */
public final class TestLogScanner {
    private TestLogScanner() {
    }

    /**
     * One valid record.
     */
    public record Record(long fileNumber, long position, byte type, int segmentId, long segmentOffset, byte[] payload) {
        public long end() {
            return position + LogRecordDescriptor.alignedLength(payload.length);
        }
    }

    /**
     * What a scan of one file found.
     *
     * @param fileNumber   the file's number.
     * @param headerValid  whether page 0 is a valid header for this number.
     * @param records      the valid records in order (padding excluded).
     * @param paddings     the padding records: [position, end) pairs.
     * @param tail         where the valid records end.
     * @param stop         why the scan stopped: "zero", "magic", "type", "crc", "partial", "padding", "eof".
     * @param badPadding   a padding record that did not end at a page boundary, or -1.
     */
    public record FileScan(long fileNumber, boolean headerValid, List<Record> records, List<long[]> paddings, long tail, String stop,
                    long badPadding) {
    }

    public static FileScan scan(final Path file) throws IOException {
        final long number = LogFileDescriptor.fileNumber(file.getFileName().toString());
        final byte[] bytes = Files.readAllBytes(file);
        final ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        final List<Record> records = new ArrayList<>();
        final List<long[]> paddings = new ArrayList<>();
        if (bytes.length < PAGE_LENGTH || !headerValid(buffer, number)) {
            return new FileScan(number, false, records, paddings, 0, "header", -1);
        }
        final CRC32C crc = new CRC32C();
        int position = FIRST_RECORD_POSITION;
        String stop = "eof";
        long badPadding = -1;
        while (position + PADDING_HEADER_LENGTH <= bytes.length) {
            final short magic = buffer.getShort(position + LogRecordDescriptor.MAGIC_OFFSET);
            if (magic != LogRecordDescriptor.MAGIC) {
                stop = magic == 0 ? "zero" : "magic";
                break;
            }
            final byte type = buffer.get(position + LogRecordDescriptor.TYPE_OFFSET);
            final int length = buffer.getInt(position + LogRecordDescriptor.LENGTH_OFFSET);
            if (type == LogRecordDescriptor.TYPE_PADDING) {
                final long end = (long)position + PADDING_HEADER_LENGTH + length;
                if (length < 0 || end > bytes.length || end % PAGE_LENGTH != 0 || end - position > PAGE_LENGTH) {
                    badPadding = position;
                    stop = "padding";
                    break;
                }
                paddings.add(new long[] {position, end});
                position = (int)end;
                continue;
            }
            if (!LogRecordDescriptor.isKnownType(type)) {
                stop = "type";
                break;
            }
            if (length < 0 || (long)position + HEADER_LENGTH + length > bytes.length) {
                stop = "partial";
                break;
            }
            final int stored = buffer.getInt(position + LogRecordDescriptor.CRC_OFFSET);
            final int computed = LogRecordDescriptor.crc(crc, number, ByteBuffer.wrap(bytes), position, length);
            if (stored != computed) {
                stop = "crc";
                break;
            }
            final byte[] payload = Arrays.copyOfRange(bytes, position + HEADER_LENGTH, position + HEADER_LENGTH + length);
            records.add(new Record(number, position, type, buffer.getInt(position + LogRecordDescriptor.SEGMENT_ID_OFFSET),
                buffer.getLong(position + LogRecordDescriptor.SEGMENT_OFFSET_OFFSET), payload));
            position += LogRecordDescriptor.alignedLength(length);
        }
        return new FileScan(number, true, records, paddings, position, stop, badPadding);
    }

    public static boolean headerValid(final ByteBuffer buffer, final long number) {
        final org.agrona.concurrent.UnsafeBuffer header = new org.agrona.concurrent.UnsafeBuffer(buffer.array(), 0, PAGE_LENGTH);
        return buffer.getLong(LogFileDescriptor.FILE_MAGIC_OFFSET) == LogFileDescriptor.FILE_MAGIC
            && buffer.getInt(LogFileDescriptor.VERSION_OFFSET) == LogFileDescriptor.VERSION
            && buffer.getInt(LogFileDescriptor.PAGE_LENGTH_OFFSET) == PAGE_LENGTH
            && buffer.getLong(LogFileDescriptor.FILE_NUMBER_OFFSET) == number
            && buffer.getInt(LogFileDescriptor.HEADER_CRC_OFFSET) == LogFileDescriptor.headerCrc(header, 0);
    }

    /**
     * @return scans of every log file in the directory, by number.
     */
    public static TreeMap<Long, FileScan> scanDirectory(final Path directory) throws IOException {
        final TreeMap<Long, FileScan> scans = new TreeMap<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory)) {
            for (final Path file : stream) {
                final long number = LogFileDescriptor.fileNumber(file.getFileName().toString());
                if (number > 0) {
                    scans.put(number, scan(file));
                }
            }
        }
        return scans;
    }

    /**
     * @return every valid record of every file, in log order.
     */
    public static List<Record> records(final Path directory) throws IOException {
        final List<Record> records = new ArrayList<>();
        for (final FileScan scan : scanDirectory(directory).values()) {
            records.addAll(scan.records());
        }
        return records;
    }
}
