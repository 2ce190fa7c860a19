package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogRecordDescriptor;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Byte-level surgery on log files for tests: records built by hand, bits flipped, ranges
 * zeroed, files cut. Stateless.
 */
public final class LogFiles {
    private LogFiles() {
    }

    /**
     * @return the bytes of one record as {@link LogRecordDescriptor} lays it out (aligned, CRC set).
     */
    public static ByteBuffer record(final long fileNumber, final byte type, final int id, final long offset, final byte[] payload) {
        final int aligned = LogRecordDescriptor.alignedLength(payload.length);
        final ByteBuffer bytes = ByteBuffer.allocate(aligned).order(ByteOrder.LITTLE_ENDIAN);
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        LogRecordDescriptor.putHeader(buffer, 0, type, payload.length, id, offset);
        buffer.putBytes(LogRecordDescriptor.HEADER_LENGTH, payload);
        final int crc = LogRecordDescriptor.crc(new CRC32C(), fileNumber, bytes, 0, payload.length);
        bytes.clear();
        bytes.putInt(LogRecordDescriptor.CRC_OFFSET, crc);
        return bytes;
    }

    /**
     * @return a PADDING record of {@code gap} bytes.
     */
    public static ByteBuffer padding(final int gap) {
        final ByteBuffer bytes = ByteBuffer.allocate(gap).order(ByteOrder.LITTLE_ENDIAN);
        LogRecordDescriptor.putPadding(new UnsafeBuffer(bytes), 0, gap);
        return bytes;
    }

    public static void write(final Path file, final long position, final ByteBuffer bytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            final ByteBuffer source = bytes.duplicate().clear();
            long at = position;
            while (source.hasRemaining()) {
                at += channel.write(source, at);
            }
        }
    }

    public static byte[] read(final Path file, final long position, final int length) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            final ByteBuffer bytes = ByteBuffer.allocate(length);
            while (bytes.hasRemaining() && channel.read(bytes, position + bytes.position()) >= 0) {
                // keep reading
            }
            return bytes.array();
        }
    }

    public static void flipBit(final Path file, final long position, final int bit) throws IOException {
        final byte[] one = read(file, position, 1);
        one[0] ^= (byte) (1 << bit);
        write(file, position, ByteBuffer.wrap(one));
    }

    public static void zero(final Path file, final long from, final long to) throws IOException {
        write(file, from, ByteBuffer.allocate((int) (to - from)));
    }

    public static void cut(final Path file, final long size) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(size);
        }
    }

    public static long size(final Path file) throws IOException {
        return Files.size(file);
    }

    public static boolean isZero(final Path file, final long from, final long to) throws IOException {
        for (final byte b : read(file, from, (int) (to - from))) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
