package io.streamcache.bench.sim;

/**
 * SIEVE (Zhang et al., NSDI 2024) over the trace's dense keys, a reference for the simulator: one
 * FIFO queue of the cached keys in insertion order, a visited bit per key set by a hit, and a
 * hand that walks from the oldest key toward the newest, clearing visited bits, and evicts the
 * first key it finds unvisited; the hand stays where it evicted and wraps to the oldest key.
 * Hits do not move keys. Confined to the simulating thread.
 */
final class SieveCache implements SimCache {
    private final long capacity;
    /** Toward newer keys ({@code newer[head]} is the oldest); an intrusive list over keys with sentinel {@code head}. */
    private final int[] newer;
    private final int[] older;
    private final boolean[] cached;
    private final boolean[] visited;
    private final int head;
    /** The key the hand points at, or {@code head} (then it starts again at the oldest). */
    private int hand;
    private long used;

    SieveCache(final Trace trace, final long capacity) {
        this.capacity = capacity;
        final int n = trace.keyCount();
        newer = new int[n + 1];
        older = new int[n + 1];
        cached = new boolean[n];
        visited = new boolean[n];
        head = n;
        newer[head] = head;
        older[head] = head;
        hand = head;
    }

    @Override
    public boolean access(final Trace trace, final int i) {
        final int key = trace.key(i);
        if (cached[key]) {
            visited[key] = true;
            return true;
        }
        if (used >= capacity) {
            evict();
        }
        // Insert as the newest: just before the sentinel going newer, i.e. at older[head].
        final int newest = older[head];
        newer[newest] = key;
        older[key] = newest;
        newer[key] = head;
        older[head] = key;
        cached[key] = true;
        visited[key] = false;
        used++;
        return false;
    }

    private void evict() {
        int k = hand == head ? newer[head] : hand;
        while (true) {
            if (k == head) {
                k = newer[head];
                continue;
            }
            if (visited[k]) {
                visited[k] = false;
                k = newer[k];
            } else {
                hand = newer[k];
                remove(k);
                return;
            }
        }
    }

    private void remove(final int key) {
        if (hand == key) {
            hand = newer[key];
        }
        newer[older[key]] = newer[key];
        older[newer[key]] = older[key];
        cached[key] = false;
        used--;
    }

    @Override
    public void delete(final Trace trace, final int i) {
        for (final int key : trace.segmentKeys(trace.segment(i))) {
            if (cached[key]) {
                remove(key);
            }
        }
    }

    @Override
    public long used() {
        return used;
    }
}
