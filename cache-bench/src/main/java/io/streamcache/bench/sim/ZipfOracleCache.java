package io.streamcache.bench.sim;

import java.util.Arrays;

/**
 * A reference for the {@code zipf} workload only: what an eviction policy could do if it knew
 * everything about the workload except the future sessions themselves. It knows the true Zipf
 * popularity of every segment (segment {@code s} is the {@code s}-th most popular, as
 * {@link Workloads#zipf} creates them), the generator's exact distributions of where a session
 * opens (0 to 256 blocks before the end) and how much it reads (16 to 128 blocks), every open
 * reader's position and how much it has read, and every segment's length. It does not know
 * which segment the next session picks, where it opens or how long it reads; Belady does.
 *
 * <p>It ranks every cached block by its value and evicts the cheapest: a block an open session
 * reaches with probability at least 1/2 (given how much that session has read) is kept, the
 * nearest first; any other block is worth {@code popularity(segment) x P(a new session on the
 * segment reads a block that far from the end)}, computed exactly from the generator's
 * distributions. It uses the whole capacity, like LRU and Belady (no 85% target), and re-ranks
 * every capacity/16 accesses. Confined to the simulating thread.
 */
final class ZipfOracleCache implements SimCache {
    private static final int SEGMENTS = 256;
    private static final int MAX_BACK = 256;
    private static final int MIN_READ = 16;
    private static final int MAX_READ = 128;

    private final long capacity;
    private final long period;
    private final double[] popularity = new double[SEGMENTS];
    /** P(a new session on a segment reads the block e blocks from its end, e = length - block). */
    private final double[] coverage = new double[MAX_BACK + 2];
    private final boolean[] cached;
    private final int[] keySegment;
    private final int[] keyBlock;
    private final int[] length;
    private final int[] readerSegment;
    private final int[] readerStart;
    private final int[] readerPosition;
    private final boolean[] readerOpen;
    private int[] open = new int[16];
    private int openCount;
    private int[] cachedKeys = new int[1024];
    private final int[] slotOf;
    private int cachedCount;
    private long[] order = new long[0];
    private int orderLength;
    private int orderNext;
    private long accesses;
    private boolean stale = true;

    ZipfOracleCache(final Trace trace, final long capacity) {
        if (!trace.name().equals("zipf")) {
            throw new IllegalArgumentException("zipf-oracle knows the zipf workload only, not " + trace.name());
        }
        this.capacity = capacity;
        this.period = Math.max(1, capacity / 16);
        double sum = 0;
        for (int s = 0; s < SEGMENTS; s++) {
            popularity[s] = 1.0 / (s + 1);
            sum += popularity[s];
        }
        for (int s = 0; s < SEGMENTS; s++) {
            popularity[s] /= sum;
        }
        for (int e = 0; e < coverage.length; e++) {
            double c = 0;
            for (int k = 0; e + k <= MAX_BACK; k++) {
                c += longerThan(k);
            }
            coverage[e] = c / (MAX_BACK + 1);
        }
        cached = new boolean[trace.keyCount()];
        keySegment = new int[trace.keyCount()];
        keyBlock = new int[trace.keyCount()];
        slotOf = new int[trace.keyCount()];
        length = new int[trace.segmentCount()];
        readerSegment = new int[trace.readerCount()];
        readerStart = new int[trace.readerCount()];
        readerPosition = new int[trace.readerCount()];
        readerOpen = new boolean[trace.readerCount()];
    }

    /** @return P(a session reads more than k blocks). */
    private static double longerThan(final int k) {
        if (k < MIN_READ) {
            return 1.0;
        }
        if (k >= MAX_READ) {
            return 0.0;
        }
        return (double) (MAX_READ - k) / (MAX_READ - MIN_READ + 1);
    }

    @Override
    public boolean access(final Trace trace, final int i) {
        if (++accesses % period == 0) {
            stale = true;
        }
        final int key = trace.key(i);
        final int segment = trace.segment(i);
        final int block = trace.block(i);
        if (trace.type(i) == Trace.APPEND) {
            length[segment] = Math.max(length[segment], block + 1);
        }
        if (trace.type(i) == Trace.READ && trace.reader(i) >= 0) {
            readerPosition[trace.reader(i)] = block + 1;
        }
        if (cached[key]) {
            return true;
        }
        if (cachedCount >= capacity) {
            evictOne();
        }
        keySegment[key] = segment;
        keyBlock[key] = block;
        cached[key] = true;
        if (cachedCount == cachedKeys.length) {
            cachedKeys = Arrays.copyOf(cachedKeys, cachedCount * 2);
        }
        slotOf[key] = cachedCount;
        cachedKeys[cachedCount++] = key;
        return false;
    }

    private void evictOne() {
        while (true) {
            if (stale || orderNext >= orderLength) {
                rank();
            }
            while (orderNext < orderLength) {
                final int key = (int) order[orderNext++];
                if (cached[key]) {
                    remove(key);
                    return;
                }
            }
            stale = true;
        }
    }

    private void remove(final int key) {
        cached[key] = false;
        final int slot = slotOf[key];
        final int last = cachedKeys[--cachedCount];
        cachedKeys[slot] = last;
        slotOf[last] = slot;
    }

    private void rank() {
        stale = false;
        if (order.length < cachedCount) {
            order = new long[cachedKeys.length];
        }
        for (int k = 0; k < cachedCount; k++) {
            final int key = cachedKeys[k];
            final float value = (float) value(key);
            order[k] = ((long) Float.floatToIntBits(value) << 32) | key;
        }
        orderLength = cachedCount;
        orderNext = 0;
        Arrays.sort(order, 0, orderLength);
    }

    private double value(final int key) {
        final int segment = keySegment[key];
        final int block = keyBlock[key];
        for (int o = 0; o < openCount; o++) {
            final int r = open[o];
            if (readerSegment[r] == segment && block >= readerPosition[r]) {
                final int read = readerPosition[r] - readerStart[r];
                final int ahead = block - readerPosition[r];
                if (longerThan(read + ahead) >= 0.5 * longerThan(read)) {
                    // Reached with probability >= 1/2: kept, the nearest last to go.
                    return 1e6 - ahead;
                }
            }
        }
        final int e = length[segment] - block;
        return e >= 0 && e < coverage.length ? popularity[segment] * coverage[e] : 0.0;
    }

    @Override
    public void reader(final Trace trace, final int i) {
        final int r = trace.reader(i);
        if (trace.type(i) == Trace.OPEN_READER) {
            readerOpen[r] = true;
            readerSegment[r] = trace.segment(i);
            readerStart[r] = trace.block(i);
            readerPosition[r] = trace.block(i);
            if (openCount == open.length) {
                open = Arrays.copyOf(open, openCount * 2);
            }
            open[openCount++] = r;
        } else if (readerOpen[r]) {
            readerOpen[r] = false;
            for (int o = 0; o < openCount; o++) {
                if (open[o] == r) {
                    open[o] = open[--openCount];
                    break;
                }
            }
        }
    }

    @Override
    public void delete(final Trace trace, final int i) {
        throw new UnsupportedOperationException("the zipf workload deletes no segment");
    }

    @Override
    public long used() {
        return cachedCount;
    }
}
