package io.streamcache.bench.mq;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;

/**
 * The physical limit of one writer on this file system: a plain {@code pwrite + fdatasync} loop
 * ({@link FileChannel#write(ByteBuffer, long)}, then {@link FileChannel#force(boolean) force(false)})
 * shaped like the log's own writes, one batch at a time, each forced before the next is written.
 * Not thread-safe: one {@link #run} at a time.
 *
 * <pre>
 *   files of fileLength bytes (the log's default 64 MiB), created with only their length set, as
 *   the log makes them without preWrite; a full file is followed by a new one
 *   batches of `batch` bytes (the facade's mean batch of the same run, rounded up to a 4 KiB page,
 *   as the log's writes are), from one direct buffer (no copy, no checksum, no hand-off)
 *   until `bytes` are written; the files are deleted afterwards
 * </pre>
 * What it leaves out, and the facade pays: records and their CRC32C, the writer and completion
 * threads' hand-offs and wakes, the copy into the cache and its indexes. The ratio of the facade's
 * phase 1 to this loop is how close the write path comes to the disk.
 */
final class RawLoop {

    /** What one loop measured. */
    record Result(double seconds, double cpuSeconds, long bytes, int batch, long forces) {
        double mbps() {
            return bytes / 1e6 / seconds;
        }

        String line() {
            return String.format(Locale.ROOT, "raw loop %8.2f s  %8.1f MB/s  (pwrite + fdatasync of %,d B batches, %,d forces)  %.2f CPU-s",
                seconds, mbps(), batch, forces, cpuSeconds);
        }
    }

    private RawLoop() {
    }

    /** Rounds {@code length} up to a whole number of 4 KiB pages (at least one). */
    static int pageBatch(final double length) {
        final long pages = Math.max(1, (long) Math.ceil(length / 4096));
        return Math.toIntExact(pages * 4096);
    }

    /**
     * Writes {@code bytes} in {@code batch}-byte writes into files of {@code fileLength} under
     * {@code dir} (created if absent; its files of this loop deleted after), forcing each write.
     */
    static Result run(final Path dir, final long bytes, final int batch, final long fileLength) throws IOException {
        if (batch <= 0 || fileLength < batch) {
            throw new IllegalArgumentException("batch " + batch + " must be positive and at most the file length " + fileLength);
        }
        Files.createDirectories(dir);
        final ByteBuffer buffer = ByteBuffer.allocateDirect(batch);
        for (int i = 0; i + 8 <= batch; i += 8) {
            buffer.putLong(i, i * 0x9E3779B97F4A7C15L);
        }
        final long start = System.nanoTime();
        final long cpuStart = MqBench.processCpuNanos();
        long written = 0;
        long forces = 0;
        int fileNumber = 0;
        FileChannel channel = null;
        long position = fileLength;
        try {
            while (written < bytes) {
                if (position + batch > fileLength) {
                    if (channel != null) {
                        channel.close();
                    }
                    channel = FileChannel.open(dir.resolve("raw-" + fileNumber++), CREATE_NEW, READ, WRITE);
                    // Only the length set, as the log's new files are without preWrite.
                    channel.write(ByteBuffer.allocate(1), fileLength - 1);
                    channel.force(true);
                    position = 0;
                }
                buffer.clear();
                while (buffer.hasRemaining()) {
                    position += channel.write(buffer, position);
                }
                channel.force(false);
                written += batch;
                forces++;
            }
        } finally {
            if (channel != null) {
                channel.close();
            }
        }
        final double seconds = (System.nanoTime() - start) / 1e9;
        final double cpuSeconds = (MqBench.processCpuNanos() - cpuStart) / 1e9;
        for (int i = 0; i < fileNumber; i++) {
            Files.deleteIfExists(dir.resolve("raw-" + i));
        }
        return new Result(seconds, cpuSeconds, written, batch, forces);
    }
}
