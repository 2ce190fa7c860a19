package io.streamcache.log.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The clean-close mark of a log directory: an immutable value, plus the static methods that
 * write, read and remove the file {@value #FILE_NAME}. A writer that closes cleanly (everything
 * written and forced, no disk error) writes it last; a writer that opens the log for writing
 * removes it (and forces the directory) before it writes anything. Recovery that finds a valid
 * mark knows the log ended exactly at {@link #fileNumber()}, {@link #endPosition()}: any damage
 * or shortfall is then corruption, never a torn write.
 *
 * <pre>
 *  0               1               2               3
 *  0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 * +---------------------------------------------------------------+
 * |                  MAGIC (u64) "SCCLEAN\1"                      |  0
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                  VERSION (u32) = 1                            |  8
 * +---------------------------------------------------------------+
 * |                  reserved (u32) = 0                           |  12
 * +---------------------------------------------------------------+
 * |                  EPOCH (u64): the closing writer's epoch      |  16
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                  FILE_NUMBER (u64): the last file written     |  24
 * |                  (0: nothing was ever written)                |
 * +---------------------------------------------------------------+
 * |                  END_POSITION (u64): the end of the last      |  32
 * |                  write in it, a 4 KB boundary                 |
 * +---------------------------------------------------------------+
 * |                  CRC (u32): CRC32C of bytes [0, 40)           |  40
 * +---------------------------------------------------------------+
 * </pre>
 * All integers little-endian. Written to {@code CLEAN.tmp}, forced, renamed to {@value #FILE_NAME}
 * and the directory forced, so a crash leaves either no mark or a whole one.
 *
 * @param epoch       the writer epoch of the writer that closed.
 * @param fileNumber  the number of the last log file written (0 if none).
 * @param endPosition the position in it where the last write ended.
 */
public record CleanMark(long epoch, long fileNumber, long endPosition) {
    private static final Logger LOG = LoggerFactory.getLogger(CleanMark.class);

    /** The mark's file name in the log directory. */
    public static final String FILE_NAME = "CLEAN";
    public static final long MAGIC = 0x014E_4145_4C43_4353L;
    public static final int VERSION = 1;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + Long.BYTES;
    public static final int RESERVED_OFFSET = VERSION_OFFSET + Integer.BYTES;
    public static final int EPOCH_OFFSET = RESERVED_OFFSET + Integer.BYTES;
    public static final int FILE_NUMBER_OFFSET = EPOCH_OFFSET + Long.BYTES;
    public static final int END_POSITION_OFFSET = FILE_NUMBER_OFFSET + Long.BYTES;
    public static final int CRC_OFFSET = END_POSITION_OFFSET + Long.BYTES;
    public static final int LENGTH = CRC_OFFSET + Integer.BYTES;

    /**
     * @return the mark encoded ({@link #LENGTH} bytes, position 0, limit {@link #LENGTH}).
     */
    public ByteBuffer encode() {
        final ByteBuffer buffer = ByteBuffer.allocate(LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(MAGIC_OFFSET, MAGIC);
        buffer.putInt(VERSION_OFFSET, VERSION);
        buffer.putInt(RESERVED_OFFSET, 0);
        buffer.putLong(EPOCH_OFFSET, epoch);
        buffer.putLong(FILE_NUMBER_OFFSET, fileNumber);
        buffer.putLong(END_POSITION_OFFSET, endPosition);
        buffer.putInt(CRC_OFFSET, crc(buffer));
        return buffer;
    }

    /**
     * @return the mark in {@code bytes}, or null if they are not a valid mark (length, magic,
     *         version or CRC wrong).
     */
    public static CleanMark decode(final byte[] bytes) {
        if (bytes.length != LENGTH) {
            return null;
        }
        final ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (buffer.getLong(MAGIC_OFFSET) != MAGIC || buffer.getInt(VERSION_OFFSET) != VERSION
            || buffer.getInt(CRC_OFFSET) != crc(buffer)) {
            return null;
        }
        return new CleanMark(buffer.getLong(EPOCH_OFFSET), buffer.getLong(FILE_NUMBER_OFFSET), buffer.getLong(END_POSITION_OFFSET));
    }

    /**
     * Writes the mark durably into {@code directory} (temporary file, force, rename, directory force).
     */
    public void write(final Path directory) throws IOException {
        final Path temporary = directory.resolve(FILE_NAME + ".tmp");
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            final ByteBuffer buffer = encode();
            while (buffer.hasRemaining()) {
                channel.write(buffer, buffer.position());
            }
            channel.force(true);
        }
        Files.move(temporary, directory.resolve(FILE_NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory(directory);
    }

    /**
     * @return the mark in {@code directory}, or null if there is none or it does not validate
     *         (a damaged mark is no proof of a clean close: it is logged at WARN and ignored).
     */
    public static CleanMark read(final Path directory) throws IOException {
        final Path file = directory.resolve(FILE_NAME);
        final byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (final NoSuchFileException e) {
            return null;
        }
        final CleanMark mark = decode(bytes);
        if (mark == null) {
            LOG.warn("clean-close mark {} does not validate (length={}); recovering as after a crash", file, bytes.length);
        }
        return mark;
    }

    /**
     * Removes the mark from {@code directory} durably (the directory is forced), before a writer
     * writes anything. A no-op if there is none.
     */
    public static void remove(final Path directory) throws IOException {
        final boolean removed = Files.deleteIfExists(directory.resolve(FILE_NAME));
        Files.deleteIfExists(directory.resolve(FILE_NAME + ".tmp"));
        if (removed) {
            forceDirectory(directory);
        }
    }

    private static int crc(final ByteBuffer buffer) {
        final CRC32C crc = new CRC32C();
        crc.update(buffer.array(), 0, CRC_OFFSET);
        return (int) crc.getValue();
    }

    private static void forceDirectory(final Path directory) throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
