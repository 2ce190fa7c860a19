package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;

/**
 * What the sequential rows of the raw benchmarks work on: one store, a source and a destination
 * of the entry length, and the next key of the batch. The JMH states of {@link BlockCacheBenchmark}
 * and {@link HotBlockCacheBenchmark} own one each and call it from their fixture methods (empty the
 * store before an insert batch, fill it before get and delete batches, put back what a delete
 * batch removed). Not thread-safe: one per state.
 */
final class SequentialFixture {
    ByteStore bytes;
    ByteBuf source;
    ByteBuf destination;
    /** The next key a batch inserts, reads or deletes. */
    int next;
    /** Keys the store holds when full: a get batch longer than this sweeps them again from key 0. */
    int keyCount;

    /**
     * Opens a store of {@code kind} for {@code keyCount} keys of {@code entryLength} bytes
     * (memcpy cycles over {@code keyCount} slots).
     */
    void open(final String kind, final int keyCount, final int entryLength) {
        open(kind, keyCount, entryLength, BlockCacheBenchmark.ALIGNMENT_AS_ALLOCATED);
    }

    /** As {@link #open(String, int, int)}, the source and destination placed as {@link BlockCacheBenchmark#bufferOf} says. */
    void open(final String kind, final int keyCount, final int entryLength, final String alignment) {
        bytes = ByteStore.create(kind, keyCount, entryLength, keyCount);
        this.keyCount = keyCount;
        source = BlockCacheBenchmark.sourceOf(entryLength, 42, alignment);
        destination = BlockCacheBenchmark.bufferOf(entryLength, alignment);
    }

    void close() {
        bytes.close();
        source.release();
        destination.release();
    }

    /** Removes the keys an insert batch added: the next batch starts from an empty store. */
    void clear() {
        for (int key = 0; key < next; key++) {
            bytes.remove(key);
        }
        next = 0;
    }

    /** Puts keys {@code [0, count)}; the next batch starts at key 0. */
    void fill(final int count) {
        for (int key = 0; key < count; key++) {
            bytes.put(key, source);
        }
        next = 0;
    }

    /** Puts back the keys a delete batch removed: the next batch starts from a full store. */
    void refill() {
        fill(next);
    }

    int insertNext() {
        final int key = next++;
        bytes.put(key, source);
        return key;
    }

    /**
     * Copies out the next key; past the last key, starts again at key 0, so that a batch of
     * several sweeps ({@code -bs}, a multiple of the key count) reads the same entries back to
     * back without the pause between batches (see the get row of {@link HotBlockCacheBenchmark}).
     */
    int getNext() {
        final int key = next;
        next = key + 1 == keyCount ? 0 : key + 1;
        return bytes.get(key, destination);
    }

    int deleteNext() {
        final int key = next++;
        bytes.remove(key);
        return key;
    }
}
