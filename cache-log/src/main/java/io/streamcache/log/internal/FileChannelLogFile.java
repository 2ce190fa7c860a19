package io.streamcache.log.internal;

import io.streamcache.log.DirectIoMode;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFile;
import io.streamcache.log.LogFileFactory;
import com.sun.nio.file.ExtendedOpenOption;
import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;

/**
 * A {@link LogFile} over a {@link FileChannel}: thread-safe (positional I/O on one channel).
 *
 * <h2>Direct I/O</h2>
 * Opened with {@link ExtendedOpenOption#DIRECT}, the channel writes straight from the caller's
 * buffer to the device; Linux then wants the buffer's address, the position and the length to
 * be multiples of the file system's block size (at most {@link LogFileDescriptor#PAGE_LENGTH}).
 * Writes from a buffer that is not direct or not aligned go through an aligned copy (the
 * aggregating writer never needs one: its batch buffers are 4 KB-aligned and every write starts
 * and ends on a 4 KB boundary); a write whose position or length is not aligned is refused. Reads
 * of any range work: unaligned ones read the covering pages into an aligned buffer allocated for
 * the call and copy out (reads are off the write path).
 *
 * <p>A file system that refuses {@code O_DIRECT} (the same open without it works) makes
 * {@link #open(Path, boolean)} fail with a {@link DirectIoRefusedException} that names the path
 * and the setting; {@link #factory(DirectIoMode)} with {@link DirectIoMode#PREFERRED} falls back
 * to buffered I/O instead, logging that once. Other errors (a missing directory, permissions)
 * are thrown as they are in every mode.
 */
public final class FileChannelLogFile implements LogFile {
    private static final Logger LOG = LoggerFactory.getLogger(FileChannelLogFile.class);

    private final Path path;
    private final FileChannel channel;
    private final boolean directIo;

    private FileChannelLogFile(final Path path, final FileChannel channel, final boolean directIo) {
        this.path = path;
        this.channel = channel;
        this.directIo = directIo;
    }

    /**
     * Opens (creating if absent) the file at {@code path} for reading and writing.
     *
     * @param directIo whether to bypass the page cache ({@code O_DIRECT}).
     * @throws IOException if the file cannot be opened, or the file system refuses direct I/O
     *                     (the message says so and names the path).
     */
    public static FileChannelLogFile open(final Path path, final boolean directIo) throws IOException {
        Objects.requireNonNull(path, "path");
        if (!directIo) {
            return new FileChannelLogFile(path, FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.CREATE), false);
        }
        final OpenOption[] options = {StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
            ExtendedOpenOption.DIRECT};
        final FileChannel channel;
        try {
            channel = FileChannel.open(path, options);
        } catch (final IOException | UnsupportedOperationException e) {
            // A refusal only if the same open without O_DIRECT works; else the error is another one.
            FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE).close();
            throw new DirectIoRefusedException("the file system refuses direct I/O (O_DIRECT) for path=" + path + ": " + e
                + "; set LogConfig directIo=OFF or PREFERRED", e);
        }
        try {
            final long blockSize = Files.getFileStore(path).getBlockSize();
            if (blockSize <= 0 || blockSize > PAGE_LENGTH || PAGE_LENGTH % blockSize != 0) {
                throw new DirectIoRefusedException("direct I/O needs a block size dividing " + PAGE_LENGTH + " but the file system of path="
                    + path + " has blockSize=" + blockSize + "; set LogConfig directIo=OFF or PREFERRED", null);
            }
        } catch (final IOException | UnsupportedOperationException e) {
            channel.close();
            throw e instanceof IOException ? (IOException)e : new DirectIoRefusedException("cannot read the block size for path=" + path, e);
        }
        return new FileChannelLogFile(path, channel, true);
    }

    /**
     * The file system refuses direct I/O for a path that it opens with buffered I/O; an
     * immutable value.
     */
    public static final class DirectIoRefusedException extends IOException {
        private static final long serialVersionUID = 1L;

        public DirectIoRefusedException(final String message, final Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * @return a factory of files opened with the given direct I/O mode; with
     *         {@link DirectIoMode#PREFERRED} a refusal is logged (once per factory) and the file
     *         opened with buffered I/O.
     */
    public static LogFileFactory factory(final DirectIoMode mode) {
        Objects.requireNonNull(mode, "mode");
        switch (mode) {
            case OFF:
                return path -> open(path, false);
            case REQUIRED:
                return path -> open(path, true);
            case PREFERRED:
            default:
                final AtomicBoolean warned = new AtomicBoolean();
                return path -> {
                    try {
                        return open(path, true);
                    } catch (final DirectIoRefusedException e) {
                        if (warned.compareAndSet(false, true)) {
                            LOG.warn("log files fall back to buffered I/O: {}", e.getMessage());
                        }
                        return open(path, false);
                    }
                };
        }
    }

    @Override
    public void write(final ByteBuffer source, final long position) throws IOException {
        if (directIo && !isAligned(source, position)) {
            writeThroughAlignedCopy(source, position);
            return;
        }
        long at = position;
        while (source.hasRemaining()) {
            at += channel.write(source, at);
        }
    }

    private void writeThroughAlignedCopy(final ByteBuffer source, final long position) throws IOException {
        if ((position & (PAGE_LENGTH - 1)) != 0 || (source.remaining() & (PAGE_LENGTH - 1)) != 0) {
            throw new IllegalArgumentException("direct I/O write of length=" + source.remaining() + " at position=" + position
                + " is not aligned to " + PAGE_LENGTH + " (path=" + path + ")");
        }
        final ByteBuffer copy = BufferUtil.allocateDirectAligned(source.remaining(), PAGE_LENGTH);
        copy.put(source).flip();
        long at = position;
        while (copy.hasRemaining()) {
            at += channel.write(copy, at);
        }
    }

    @Override
    public int read(final ByteBuffer destination, final long position) throws IOException {
        if (directIo && !isAligned(destination, position)) {
            return readThroughAlignedCopy(destination, position);
        }
        return readFully(channel, destination, position);
    }

    /**
     * Reads from {@code position} until {@code destination} is full or the file ends.
     *
     * @return bytes read.
     */
    static int readFully(final FileChannel channel, final ByteBuffer destination, final long position) throws IOException {
        final int wanted = destination.remaining();
        long at = position;
        while (destination.hasRemaining()) {
            final int n = channel.read(destination, at);
            if (n < 0) {
                break;
            }
            at += n;
        }
        return wanted - destination.remaining();
    }

    private int readThroughAlignedCopy(final ByteBuffer destination, final long position) throws IOException {
        final long start = position & -PAGE_LENGTH;
        final long end = LogRecordDescriptor.align(position + destination.remaining(), PAGE_LENGTH);
        final ByteBuffer copy = BufferUtil.allocateDirectAligned((int)(end - start), PAGE_LENGTH);
        long at = start;
        while (copy.hasRemaining()) {
            final int n = channel.read(copy, at);
            if (n < 0) {
                break;
            }
            at += n;
        }
        final int available = (int)Math.max(0, Math.min(destination.remaining(), at - position));
        copy.limit((int)(position - start) + available).position((int)(position - start));
        destination.put(copy);
        return available;
    }

    private static boolean isAligned(final ByteBuffer buffer, final long position) {
        return buffer.isDirect()
            && ((BufferUtil.address(buffer) + buffer.position()) & (PAGE_LENGTH - 1)) == 0
            && (position & (PAGE_LENGTH - 1)) == 0
            && (buffer.remaining() & (PAGE_LENGTH - 1)) == 0;
    }

    @Override
    public void force() throws IOException {
        channel.force(false);
    }

    @Override
    public long length() throws IOException {
        return channel.size();
    }

    @Override
    public void setLength(final long length) throws IOException {
        if (length < channel.size()) {
            channel.truncate(length);
            return;
        }
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw")) {
            file.setLength(length);
        }
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public boolean isDirectIo() {
        return directIo;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public String toString() {
        return "FileChannelLogFile{path=" + path + ", directIo=" + directIo + '}';
    }
}
