package io.streamcache.bench.sim;

/**
 * Belady's MIN over the trace, the bound for the simulator: on a miss in a full cache it evicts
 * the cached block whose next use lies farthest ahead (never used again first). Like the
 * policies under test it caches every appended block and every block read, so it is optimal
 * among the caches the simulator compares (demand paging with forced admission). A lazy
 * max-heap of (next use, key). Confined to the simulating thread.
 */
final class BeladyCache implements SimCache {
    private final long capacity;
    private final int[] nextUses;
    private final boolean[] cached;
    private final int[] nextOf;
    private long[] heap = new long[1024];
    private int heapSize;
    private long used;

    BeladyCache(final Trace trace, final int[] nextUses, final long capacity) {
        this.capacity = capacity;
        this.nextUses = nextUses;
        cached = new boolean[trace.keyCount()];
        nextOf = new int[trace.keyCount()];
    }

    @Override
    public boolean access(final Trace trace, final int i) {
        final int key = trace.key(i);
        final int nextUse = nextUses[i];
        if (cached[key]) {
            nextOf[key] = nextUse;
            push(nextUse, key);
            return true;
        }
        if (used >= capacity) {
            while (true) {
                final long top = pop();
                final int victim = (int) top;
                if (cached[victim] && nextOf[victim] == (int) (top >>> 32)) {
                    cached[victim] = false;
                    used--;
                    break;
                }
            }
        }
        cached[key] = true;
        nextOf[key] = nextUse;
        push(nextUse, key);
        used++;
        if (heapSize > 4 * capacity + 4096) {
            rebuild();
        }
        return false;
    }

    @Override
    public void delete(final Trace trace, final int i) {
        for (final int key : trace.segmentKeys(trace.segment(i))) {
            if (cached[key]) {
                cached[key] = false;
                used--;
            }
        }
    }

    @Override
    public long used() {
        return used;
    }

    /** Drops stale heap entries: keeps one per cached key. */
    private void rebuild() {
        int n = 0;
        for (int j = 0; j < heapSize; j++) {
            final long e = heap[j];
            final int key = (int) e;
            if (cached[key] && nextOf[key] == (int) (e >>> 32)) {
                heap[n++] = e;
                nextOf[key] = ~nextOf[key];
            }
        }
        for (int j = 0; j < n; j++) {
            final int key = (int) heap[j];
            nextOf[key] = ~nextOf[key];
        }
        heapSize = n;
        for (int j = (n >>> 1) - 1; j >= 0; j--) {
            siftDown(j);
        }
    }

    private void push(final int nextUse, final int key) {
        if (heapSize == heap.length) {
            heap = java.util.Arrays.copyOf(heap, heapSize * 2);
        }
        int j = heapSize++;
        final long e = ((long) nextUse << 32) | (key & 0xffffffffL);
        while (j > 0) {
            final int parent = (j - 1) >>> 1;
            if (heap[parent] >= e) {
                break;
            }
            heap[j] = heap[parent];
            j = parent;
        }
        heap[j] = e;
    }

    private long pop() {
        final long top = heap[0];
        heap[0] = heap[--heapSize];
        siftDown(0);
        return top;
    }

    private void siftDown(int j) {
        final long e = heap[j];
        while (true) {
            final int left = 2 * j + 1;
            if (left >= heapSize) {
                break;
            }
            int child = left;
            if (left + 1 < heapSize && heap[left + 1] > heap[left]) {
                child = left + 1;
            }
            if (heap[child] <= e) {
                break;
            }
            heap[j] = heap[child];
            j = child;
        }
        heap[j] = e;
    }
}
