package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;

/**
 * Pravega's random test (from its streaming-cache design) on one store: each step inserts a new key (60%) or deletes a
 * random live one (40%; always an insert when nothing is live), then copies out a random live
 * entry. Live keys sit in a dense array for O(1) random pick and removal; keys are
 * {@code firstKey, firstKey + 1, ...}. Allocation-free. Not thread-safe: one per benchmark
 * thread (the store may be shared).
 */
final class RandomOps {
    private final int firstKey;
    private final int[] live;
    private int liveCount;
    private int nextKey;
    private long seed;

    /**
     * @param firstKey first key this instance inserts.
     * @param capacity most operations between two {@link #empty} calls.
     * @param seed     of the operation and key choices.
     */
    RandomOps(final int firstKey, final int capacity, final long seed) {
        this.firstKey = firstKey;
        this.live = new int[capacity];
        this.seed = 0x9E3779B97F4A7C15L ^ seed;
    }

    /**
     * One operation of the test.
     *
     * @return the length of the entry copied out, 0 if none is live.
     */
    int step(final ByteStore bytes, final ByteBuf source, final ByteBuf destination) {
        if (liveCount == 0 || nextInt(10) < 6) {
            final int key = firstKey + nextKey++;
            bytes.put(key, source);
            live[liveCount++] = key;
        } else {
            final int i = nextInt(liveCount);
            bytes.remove(live[i]);
            live[i] = live[--liveCount];
        }
        return liveCount == 0 ? 0 : bytes.get(live[nextInt(liveCount)], destination);
    }

    /**
     * Removes every live entry from {@code bytes}: the next step starts from an empty store.
     */
    void empty(final ByteStore bytes) {
        for (int i = 0; i < liveCount; i++) {
            bytes.remove(live[i]);
        }
        liveCount = 0;
        nextKey = 0;
    }

    /** xorshift64*: allocation-free, good enough to pick operations and keys. */
    private int nextInt(final int bound) {
        seed ^= seed >>> 12;
        seed ^= seed << 25;
        seed ^= seed >>> 27;
        return (int)(((seed * 0x2545F4914F6CDD1DL) >>> 33) % bound);
    }
}
