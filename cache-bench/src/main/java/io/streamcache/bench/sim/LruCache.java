package io.streamcache.bench.sim;

import java.util.Arrays;

/**
 * Exact LRU over the trace's dense keys, a reference for the simulator: an intrusive doubly
 * linked list in two int arrays. Confined to the simulating thread.
 */
final class LruCache implements SimCache {
    private final long capacity;
    private final int[] prev;
    private final int[] next;
    private final boolean[] cached;
    private final int head;
    private long used;

    LruCache(final Trace trace, final long capacity) {
        this.capacity = capacity;
        final int n = trace.keyCount();
        prev = new int[n + 1];
        next = new int[n + 1];
        cached = new boolean[n];
        head = n;
        prev[head] = head;
        next[head] = head;
        Arrays.fill(cached, false);
    }

    @Override
    public boolean access(final Trace trace, final int i) {
        final int key = trace.key(i);
        if (cached[key]) {
            unlink(key);
            pushFront(key);
            return true;
        }
        if (used >= capacity) {
            final int victim = prev[head];
            unlink(victim);
            cached[victim] = false;
            used--;
        }
        cached[key] = true;
        pushFront(key);
        used++;
        return false;
    }

    @Override
    public void delete(final Trace trace, final int i) {
        for (final int key : trace.segmentKeys(trace.segment(i))) {
            if (cached[key]) {
                unlink(key);
                cached[key] = false;
                used--;
            }
        }
    }

    @Override
    public long used() {
        return used;
    }

    private void unlink(final int key) {
        next[prev[key]] = next[key];
        prev[next[key]] = prev[key];
    }

    private void pushFront(final int key) {
        prev[key] = head;
        next[key] = next[head];
        prev[next[head]] = key;
        next[head] = key;
    }
}
