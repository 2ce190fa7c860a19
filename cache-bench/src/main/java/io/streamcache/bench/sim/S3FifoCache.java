package io.streamcache.bench.sim;

/**
 * S3-FIFO (Yang et al., SOSP 2023) over the trace's dense keys, a reference for the simulator:
 * a small FIFO queue S (10% of the capacity) that new keys enter, a main FIFO queue M (the rest),
 * and a ghost FIFO G of keys recently evicted from S (as many as M holds). Each cached key counts
 * its hits up to 3. To make room: while S holds at least its share, its oldest key moves to M if
 * it was hit in S, else leaves for G; otherwise M's oldest key is reinserted with its count less
 * one if that count is above zero, else evicted. A miss on a key in G goes to M directly.
 * Confined to the simulating thread.
 */
final class S3FifoCache implements SimCache {
    private static final int NOT_CACHED = 0;
    private static final int IN_SMALL = 1;
    private static final int IN_MAIN = 2;

    private final long capacity;
    private final long smallCapacity;
    /** Intrusive FIFO lists over keys: sentinels {@code small} and {@code main}; next = newer. */
    private final int[] newer;
    private final int[] older;
    private final byte[] where;
    private final byte[] freq;
    private final int small;
    private final int main;
    private long smallUsed;
    private long mainUsed;
    /** The ghost queue: a ring of keys; a key is in it while {@code ghostAt[key]} names its latest slot. */
    private final int[] ghost;
    private final long[] ghostAt;
    private long ghostNext;

    S3FifoCache(final Trace trace, final long capacity) {
        this.capacity = capacity;
        this.smallCapacity = Math.max(1, capacity / 10);
        final int n = trace.keyCount();
        newer = new int[n + 2];
        older = new int[n + 2];
        where = new byte[n];
        freq = new byte[n];
        small = n;
        main = n + 1;
        for (final int s : new int[] {small, main}) {
            newer[s] = s;
            older[s] = s;
        }
        ghost = new int[(int) Math.max(1, Math.min(Integer.MAX_VALUE - 8, capacity - smallCapacity))];
        ghostAt = new long[n];
        java.util.Arrays.fill(ghostAt, -1);
    }

    @Override
    public boolean access(final Trace trace, final int i) {
        final int key = trace.key(i);
        if (where[key] != NOT_CACHED) {
            if (freq[key] < 3) {
                freq[key]++;
            }
            return true;
        }
        while (smallUsed + mainUsed >= capacity) {
            evict();
        }
        freq[key] = 0;
        if (inGhost(key)) {
            ghostAt[key] = -1;
            push(main, key);
            where[key] = IN_MAIN;
            mainUsed++;
        } else {
            push(small, key);
            where[key] = IN_SMALL;
            smallUsed++;
        }
        return false;
    }

    private void evict() {
        if (smallUsed >= smallCapacity || mainUsed == 0) {
            final int oldest = newer[small];
            unlink(oldest);
            smallUsed--;
            if (freq[oldest] > 0) {
                freq[oldest] = 0;
                push(main, oldest);
                where[oldest] = IN_MAIN;
                mainUsed++;
            } else {
                where[oldest] = NOT_CACHED;
                addGhost(oldest);
            }
            return;
        }
        while (true) {
            final int oldest = newer[main];
            unlink(oldest);
            if (freq[oldest] > 0) {
                freq[oldest]--;
                push(main, oldest);
            } else {
                where[oldest] = NOT_CACHED;
                mainUsed--;
                return;
            }
        }
    }

    private boolean inGhost(final int key) {
        final long at = ghostAt[key];
        return at >= 0 && ghostNext - at <= ghost.length;
    }

    private void addGhost(final int key) {
        ghost[(int) (ghostNext % ghost.length)] = key;
        ghostAt[key] = ghostNext++;
    }

    private void push(final int queue, final int key) {
        final int newest = older[queue];
        newer[newest] = key;
        older[key] = newest;
        newer[key] = queue;
        older[queue] = key;
    }

    private void unlink(final int key) {
        newer[older[key]] = newer[key];
        older[newer[key]] = older[key];
    }

    @Override
    public void delete(final Trace trace, final int i) {
        for (final int key : trace.segmentKeys(trace.segment(i))) {
            if (where[key] == IN_SMALL) {
                unlink(key);
                smallUsed--;
            } else if (where[key] == IN_MAIN) {
                unlink(key);
                mainUsed--;
            }
            where[key] = NOT_CACHED;
            ghostAt[key] = -1;
        }
    }

    @Override
    public long used() {
        return smallUsed + mainUsed;
    }
}
