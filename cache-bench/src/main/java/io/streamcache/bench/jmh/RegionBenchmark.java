package io.streamcache.bench.jmh;

import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.PmemRegion;
import org.agrona.BufferUtil;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * Read and write bandwidth of each kind of memory region, beside a plain memcpy: chunks of
 * {@link #chunk} bytes copied between one hot direct buffer and a working set of
 * {@link #workingSetMiB} MiB in the region (well beyond the CPU caches), walked in order and
 * wrapping around, with {@code Unsafe.copyMemory} on native addresses exactly as the block cache
 * copies data in and out of its buffers. Only the memory differs:
 * <ul>
 *   <li>{@code memcpy}: the physical limit, plain native memory ({@code Unsafe.allocateMemory});</li>
 *   <li>{@code direct}: a {@link DirectMemoryRegion} (JVM direct memory, the default region);</li>
 *   <li>{@code mapped-shm}: a {@link MappedFileRegion} on {@code /dev/shm} (tmpfs pages);</li>
 *   <li>{@code pmem-file}: a {@link PmemRegion} (llpl's {@code MemoryPool}) on a regular file in
 *       the temporary directory: what PMEM code costs where there is no PMEM, page cache and
 *       write-back included; on a DAX-mounted PMEM file system it would measure the media.</li>
 * </ul>
 *
 * <p><b>Unit:</b> every invocation copies exactly {@link #BYTES_PER_OPERATION} (1 MiB) in
 * {@code 1 MiB / chunk} copies, so the score in operations per second is MiB/s (GB/s = score
 * x 1.048576 / 1000) when JMH runs without {@code -bs} (a batch size multiplies the bytes per
 * operation). Every page of the working set is written once at setup, so no page fault is
 * measured.
 *
 * <pre>
 *   write: [ hot buffer: chunk bytes ] --copy--> [ region: chunk 0 | chunk 1 | ... | chunk n-1 ] (next chunk each copy)
 *   read:  [ region: chunk 0 | chunk 1 | ... | chunk n-1 ] --copy--> [ hot buffer: chunk bytes ]
 * </pre>
 *
 * <p>Single-threaded: the state is per thread, and a benchmark run with more threads measures
 * each thread over its own region.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms256m", "-Xmx256m", "-XX:MaxDirectMemorySize=1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 8, time = 1)
@State(Scope.Thread)
public class RegionBenchmark {
    /** Bytes copied per benchmark operation: the score is MiB/s. */
    public static final int BYTES_PER_OPERATION = 1 << 20;
    /** Buffer length of the regions: the block cache's default, 2 MB. */
    public static final int BUFFER_LENGTH = 2 << 20;
    private static final int PAGE = 4096;

    @Param({"memcpy", "direct", "mapped-shm", "pmem-file"})
    public String memory;

    /**
     * Bytes per copy: a cache block, and a size where only bandwidth counts. Two sizes, not more,
     * so that the CI smoke run (one fork per combination) stays near 15 s; add others with
     * {@code -p chunk=4096,65536,1048576}.
     */
    @Param({"4096", "1048576"})
    public int chunk;

    @Param({"512"})
    public int workingSetMiB;

    private MemoryRegion region;
    private long plain;
    private Path directory;
    /** Owns the hot buffer's memory; {@link #hotAddress} is its first page-aligned byte. */
    private ByteBuffer hot;
    private long hotAddress;
    private long[] chunks;
    private int copiesPerOperation;
    private int next;

    @Setup(Level.Trial)
    public void open() throws IOException {
        if (chunk <= 0 || Integer.bitCount(chunk) != 1 || chunk > BYTES_PER_OPERATION) {
            throw new IllegalArgumentException("chunk=" + chunk + " must be a power of two of at most " + BYTES_PER_OPERATION);
        }
        if (workingSetMiB <= 0 || ((long)workingSetMiB << 20) % BUFFER_LENGTH != 0) {
            throw new IllegalArgumentException("workingSetMiB=" + workingSetMiB + " must be a positive multiple of "
                + (BUFFER_LENGTH >> 20));
        }
        final long workingSet = (long)workingSetMiB << 20;
        final int bufferCount = (int)(workingSet / BUFFER_LENGTH);
        final long[] bases = new long[bufferCount];
        switch (memory) {
            case "memcpy":
                plain = UNSAFE.allocateMemory(workingSet + BUFFER_LENGTH);
                final long aligned = (plain + BUFFER_LENGTH - 1) & -(long)BUFFER_LENGTH;
                for (int b = 0; b < bufferCount; b++) {
                    bases[b] = aligned + (long)b * BUFFER_LENGTH;
                }
                break;
            case "direct":
                // Every buffer read here directly, not through a cache that would take them as it needs
                // them (the default, on-demand commit): lazily committed, as before that default.
                region = DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY).open(bufferCount, BUFFER_LENGTH);
                break;
            case "mapped-shm":
                directory = Files.createTempDirectory(Path.of("/dev/shm"), "streamcache-region-bench");
                region = MappedFileRegion.factory(directory.resolve("region.map")).open(bufferCount, BUFFER_LENGTH);
                break;
            case "pmem-file":
                directory = Files.createTempDirectory("streamcache-region-bench");
                region = PmemRegion.factory(directory.resolve("region.pool")).open(bufferCount, BUFFER_LENGTH);
                break;
            default:
                throw new IllegalArgumentException("memory=" + memory + " (expected memcpy, direct, mapped-shm, pmem-file)");
        }
        if (region != null) {
            for (int b = 0; b < bufferCount; b++) {
                bases[b] = BufferUtil.address(region.buffer(b));
            }
        }
        final int chunksPerBuffer = BUFFER_LENGTH / chunk;
        chunks = new long[bufferCount * chunksPerBuffer];
        for (int b = 0; b < bufferCount; b++) {
            for (int c = 0; c < chunksPerBuffer; c++) {
                chunks[b * chunksPerBuffer + c] = bases[b] + (long)c * chunk;
            }
        }
        copiesPerOperation = BYTES_PER_OPERATION / chunk;
        hot = ByteBuffer.allocateDirect(chunk + PAGE);
        hotAddress = (BufferUtil.address(hot) + PAGE - 1) & -(long)PAGE;
        final byte[] random = new byte[chunk];
        new SplittableRandom(chunk).nextBytes(random);
        UNSAFE.copyMemory(random, BufferUtil.ARRAY_BASE_OFFSET, null, hotAddress, chunk);
        for (final long base : bases) {
            for (long page = 0; page < BUFFER_LENGTH; page += PAGE) {
                UNSAFE.putLong(base + page, page);
            }
        }
        next = 0;
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        if (region != null) {
            region.close();
            region = null;
        }
        if (plain != 0) {
            UNSAFE.freeMemory(plain);
            plain = 0;
        }
        if (directory != null) {
            Files.deleteIfExists(directory.resolve("region.map"));
            Files.deleteIfExists(directory.resolve("region.pool"));
            Files.deleteIfExists(directory);
            directory = null;
        }
        if (hot != null) {
            BufferUtil.free(hot);
            hot = null;
        }
    }

    /**
     * Copies 1 MiB from the hot buffer into the working set, a chunk at a time.
     *
     * @return the next chunk's index, so that nothing is dead code.
     */
    @Benchmark
    public int write() {
        int n = next;
        for (int i = 0; i < copiesPerOperation; i++) {
            UNSAFE.copyMemory(hotAddress, chunks[n], chunk);
            n = n + 1 == chunks.length ? 0 : n + 1;
        }
        next = n;
        return n;
    }

    /**
     * Copies 1 MiB from the working set into the hot buffer, a chunk at a time.
     *
     * @return the next chunk's index, so that nothing is dead code.
     */
    @Benchmark
    public int read() {
        int n = next;
        for (int i = 0; i < copiesPerOperation; i++) {
            UNSAFE.copyMemory(chunks[n], hotAddress, chunk);
            n = n + 1 == chunks.length ? 0 : n + 1;
        }
        next = n;
        return n;
    }
}
