package io.streamcache.segmentstore.internal.log.recovery;

import java.util.Arrays;

/**
 * Recycled storage chunks of {@link LocationIndex}es: {@code long[]} and {@code int[]} whose
 * lengths are powers of two, {@code long[1 .. 512]} and {@code int[1 .. 512]}, kept per length
 * on a stack, up to a bound of retained bytes.
 * <pre>
 *   longs[k]: long[1 &lt;&lt; k] chunks, k = 0..9      ints[k]: int[1 &lt;&lt; k] chunks, k = 0..9
 *   +---------+---------+-----+                    +---------+-----+
 *   | chunk 0 | chunk 1 | ... | (stack, top last)   | chunk 0 | ... |
 *   +---------+---------+-----+                    +---------+-----+
 * </pre>
 * An index gives a chunk back when truncation drops it or the segment is deleted, under the
 * index's monitor and after it removed every reference to it, so no reader of that index can
 * still see it (readers hold the index's monitor while they read its chunks); another index then
 * takes it and overwrites it under its own monitor.
 *
 * <p><b>Memory bound:</b> at most {@code maxRetainedBytes} of chunk contents (plus 16 bytes of
 * header each) are held here; a chunk given back beyond it is left to the garbage collector.
 * {@link #footprint()} counts what is held. The chunks lent to indexes are counted by the
 * indexes' {@link LocationIndex#footprint()}.
 *
 * <p><b>Threading:</b> thread-safe (every method holds the pool's monitor). In the store it is
 * used by the log writer's thread only (the location feed), so the monitor is uncontended.
 *
 * <p><b>Poisoning</b> (tests): with {@code poison}, a chunk given back is filled with -1, so a
 * reader that used a chunk after its return would read file numbers and offsets no index holds.
 */
public final class LocationChunkPool {
    /** Largest chunk: 512 entries (a 4 KB {@code long[]}). */
    public static final int MAX_CHUNK_LOG = 9;
    private static final int CLASSES = MAX_CHUNK_LOG + 1;
    private static final int HEADER = 16;

    private final long maxRetainedBytes;
    private final boolean poison;
    private final long[][][] longs = new long[CLASSES][][];
    private final int[] longCounts = new int[CLASSES];
    private final int[][][] ints = new int[CLASSES][][];
    private final int[] intCounts = new int[CLASSES];
    private long retainedBytes;
    private long allocated;
    private long reused;

    /**
     * @param maxRetainedBytes bytes of chunks held at most (0: none, every chunk is garbage).
     * @param poison           fill returned chunks with -1 (tests).
     */
    public LocationChunkPool(final long maxRetainedBytes, final boolean poison) {
        if (maxRetainedBytes < 0) {
            throw new IllegalArgumentException("maxRetainedBytes=" + maxRetainedBytes + " must be >= 0");
        }
        this.maxRetainedBytes = maxRetainedBytes;
        this.poison = poison;
    }

    /**
     * @return a {@code long[1 << log]} (contents undefined), recycled if one is held.
     */
    public synchronized long[] takeLongs(final int log) {
        final int n = longCounts[log];
        if (n > 0) {
            final long[] chunk = longs[log][n - 1];
            longs[log][n - 1] = null;
            longCounts[log] = n - 1;
            retainedBytes -= bytes(chunk.length, 8);
            reused++;
            return chunk;
        }
        allocated++;
        return new long[1 << log];
    }

    /**
     * @return an {@code int[1 << log]} (contents undefined), recycled if one is held.
     */
    public synchronized int[] takeInts(final int log) {
        final int n = intCounts[log];
        if (n > 0) {
            final int[] chunk = ints[log][n - 1];
            ints[log][n - 1] = null;
            intCounts[log] = n - 1;
            retainedBytes -= bytes(chunk.length, 4);
            reused++;
            return chunk;
        }
        allocated++;
        return new int[1 << log];
    }

    /** Takes back a chunk no index refers to any more (kept if within the bound). */
    public synchronized void give(final long[] chunk) {
        final int log = log(chunk.length);
        final long size = bytes(chunk.length, 8);
        if (retainedBytes + size > maxRetainedBytes) {
            return;
        }
        if (poison) {
            Arrays.fill(chunk, -1L);
        }
        final int n = longCounts[log];
        if (longs[log] == null || n == longs[log].length) {
            longs[log] = Arrays.copyOf(longs[log] == null ? new long[0][] : longs[log], Math.max(8, 2 * n));
        }
        longs[log][n] = chunk;
        longCounts[log] = n + 1;
        retainedBytes += size;
    }

    /** Takes back a chunk no index refers to any more (kept if within the bound). */
    public synchronized void give(final int[] chunk) {
        final int log = log(chunk.length);
        final long size = bytes(chunk.length, 4);
        if (retainedBytes + size > maxRetainedBytes) {
            return;
        }
        if (poison) {
            Arrays.fill(chunk, -1);
        }
        final int n = intCounts[log];
        if (ints[log] == null || n == ints[log].length) {
            ints[log] = Arrays.copyOf(ints[log] == null ? new int[0][] : ints[log], Math.max(8, 2 * n));
        }
        ints[log][n] = chunk;
        intCounts[log] = n + 1;
        retainedBytes += size;
    }

    /** @return heap bytes of the chunks held (headers included; the stacks themselves not). */
    public synchronized long footprint() {
        return retainedBytes;
    }

    /** @return chunks allocated because none of their size was held. */
    public synchronized long allocated() {
        return allocated;
    }

    /** @return chunks handed out again after their return. */
    public synchronized long reused() {
        return reused;
    }

    private static long bytes(final int length, final int width) {
        return HEADER + (long) length * width;
    }

    private static int log(final int length) {
        if (Integer.bitCount(length) != 1 || length > 1 << MAX_CHUNK_LOG) {
            throw new IllegalArgumentException("not a chunk length: " + length);
        }
        return Integer.numberOfTrailingZeros(length);
    }
}
