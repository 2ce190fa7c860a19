package io.streamcache.segmentstore.internal.log;

import io.streamcache.segmentstore.log.LogFile;
import com.sun.nio.file.ExtendedOpenOption;
import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

import static io.streamcache.segmentstore.internal.log.LogFileDescriptor.PAGE_LENGTH;

/**
 * Writes a new log file's zeros (its pre-writing, {@link io.streamcache.segmentstore.log.LogConfig#preWrite()})
 * for the {@link LogDirectory}: thread-safe (one zero buffer, only read).
 *
 * <p>A file of the default kind ({@link FileChannelLogFile}) is written through a second channel
 * opened with {@code O_DIRECT} when the file system allows it: the zeros go from one aligned
 * buffer to the device, with no copy into the page cache (the directory thread's CPU, on a
 * machine where the producers and the writer want it) and no dirty pages left for the kernel's
 * writeback, or the header's force, to flush in one burst while the writer forces its batches
 * (issue 14: the log files thread's pwrite of 64 MB per file was 381 native samples against
 * the writer's 647 in fdatasync). Other files (tests' fault-injecting files, a file system
 * refusing {@code O_DIRECT}) are written through their own {@link LogFile#write}, as before.
 * Either way every byte of {@code [0, length)} is zero afterwards; the caller forces the file
 * (its header write does) before the file is used.
 * <pre>
 *  spare file:  | 1 MB zeros | 1 MB zeros | ... | 1 MB zeros |   each one pwrite(O_DIRECT) from
 *               0                                       fileLength    the same aligned buffer
 * </pre>
 */
final class FilePreWriter {
    private static final Logger LOG = LoggerFactory.getLogger(FilePreWriter.class);
    static final int CHUNK_LENGTH = 1 << 20;

    private final ByteBuffer zeros;
    private final boolean direct;
    private volatile boolean directRefused;

    /**
     * @param fileLength the files' length (the buffer is no longer than it).
     * @param direct     whether to try {@code O_DIRECT} for files of the default kind.
     */
    FilePreWriter(final long fileLength, final boolean direct) {
        this.zeros = BufferUtil.allocateDirectAligned((int)Math.min(CHUNK_LENGTH, fileLength), PAGE_LENGTH);
        this.direct = direct;
    }

    /**
     * Writes zeros over {@code [0, length)} of {@code file} ({@code length} a multiple of
     * {@link LogFileDescriptor#PAGE_LENGTH}).
     *
     * @return whether it went around the page cache.
     */
    boolean preWrite(final LogFile file, final long length) throws IOException {
        if (direct && !directRefused && file instanceof FileChannelLogFile) {
            final FileChannel channel;
            try {
                channel = FileChannel.open(file.path(), StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
            } catch (final IOException | UnsupportedOperationException e) {
                directRefused = true;
                LOG.info("pre-writing log files through the page cache: O_DIRECT refused for {}: {}", file.path(), e.toString());
                writeThrough(file, length);
                return false;
            }
            try (channel) {
                for (long position = 0; position < length; ) {
                    final ByteBuffer chunk = chunk(length - position);
                    final int n = chunk.remaining();
                    while (chunk.hasRemaining()) {
                        channel.write(chunk, position + chunk.position());
                    }
                    position += n;
                }
            }
            return true;
        }
        writeThrough(file, length);
        return false;
    }

    private void writeThrough(final LogFile file, final long length) throws IOException {
        for (long position = 0; position < length; ) {
            final ByteBuffer chunk = chunk(length - position);
            final int n = chunk.remaining();
            file.write(chunk, position);
            position += n;
        }
    }

    private ByteBuffer chunk(final long left) {
        final ByteBuffer chunk = zeros.duplicate();
        chunk.limit((int)Math.min(chunk.capacity(), left)).position(0);
        return chunk;
    }
}
