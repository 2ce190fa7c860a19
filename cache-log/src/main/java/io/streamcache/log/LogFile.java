package io.streamcache.log;

import io.streamcache.log.internal.FileChannelLogFile;
import io.streamcache.log.internal.LogFileDescriptor;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * One log file as the writer and the readers see it: implementations are thread-safe; positional
 * reads and writes may run concurrently from any threads (the aggregating writer writes from one
 * thread, historical reads come from others).
 *
 * <p>The operations are those of a file with a page cache in front of a disk: {@link #write}
 * puts bytes in the page cache, {@link #force} makes everything written before it durable
 * ({@code fdatasync}). A power cut loses what was not forced, or part of it: the test model
 * {@code PowerCutLogFile} drops or tears unforced writes at 4 KB granularity.
 *
 * <p>Implementations: {@code FileChannelLogFile} (a {@link java.nio.channels.FileChannel},
 * optionally {@code O_DIRECT}); tests wrap it (power cuts, disk full).
 */
public interface LogFile extends Closeable {
    /**
     * Writes all the remaining bytes of {@code source} at {@code position}; on return the source's
     * position is at its limit. With {@link #isDirectIo() direct I/O} the source must be a direct
     * buffer whose address, remaining length and {@code position} are multiples of
     * {@code LogFileDescriptor#PAGE_LENGTH} (the aggregating writer's always are).
     *
     * @throws IOException if the file system fails (for example {@code No space left on device});
     *                     some of the bytes may have been written.
     */
    void write(ByteBuffer source, long position) throws IOException;

    /**
     * Reads from {@code position} until {@code destination} is full or the file ends; any
     * buffer, position and length.
     *
     * @return bytes read: less than the destination's remaining bytes only at the end of the file.
     */
    int read(ByteBuffer destination, long position) throws IOException;

    /**
     * Makes every byte written before the call durable, with the file's length if it changed
     * ({@code FileChannel.force(false)}: {@code fdatasync}).
     */
    void force() throws IOException;

    /**
     * @return the file's length in bytes.
     */
    long length() throws IOException;

    /**
     * Sets the file's length: shrinks it, or grows it without writing (a sparse extension).
     */
    void setLength(long length) throws IOException;

    /**
     * @return the file's path.
     */
    Path path();

    /**
     * @return whether writes bypass the page cache ({@code O_DIRECT}).
     */
    default boolean isDirectIo() {
        return false;
    }

    /**
     * Closes the file; writes and reads after it throw. Idempotent.
     */
    @Override
    void close() throws IOException;
}
