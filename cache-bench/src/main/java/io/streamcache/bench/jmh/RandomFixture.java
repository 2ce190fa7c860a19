package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;

/**
 * What a random-workload state of the raw benchmarks holds: one store, a source and a destination
 * of the entry length, and the test's live keys ({@link RandomOps}). The JMH states of
 * {@link BlockCacheBenchmark} and {@link HotBlockCacheBenchmark} own one each and call
 * {@link #open}, {@link #reset} and {@link #close} from their fixture methods. Not thread-safe:
 * one per state.
 */
final class RandomFixture {
    final RandomOps ops;
    ByteStore bytes;
    ByteBuf source;
    ByteBuf destination;

    /**
     * @param operations most operations between two {@link #reset} calls (a batch).
     */
    RandomFixture(final int operations) {
        this.ops = new RandomOps(0, operations, 0);
    }

    /**
     * Opens a store of {@code kind} for {@code keyCount} keys of {@code entryLength} bytes
     * (memcpy cycles over {@code slotCount} slots).
     */
    void open(final String kind, final int keyCount, final int entryLength, final int slotCount) {
        open(kind, keyCount, entryLength, slotCount, BlockCacheBenchmark.ALIGNMENT_AS_ALLOCATED);
    }

    /** As {@link #open(String, int, int, int)}, the source and destination placed as {@link BlockCacheBenchmark#bufferOf} says. */
    void open(final String kind, final int keyCount, final int entryLength, final int slotCount, final String alignment) {
        bytes = ByteStore.create(kind, keyCount, entryLength, slotCount);
        source = BlockCacheBenchmark.sourceOf(entryLength, 7, alignment);
        destination = BlockCacheBenchmark.bufferOf(entryLength, alignment);
    }

    /** Empties the store: the next batch starts from nothing live. */
    void reset() {
        ops.empty(bytes);
    }

    /** Empties and closes the store, releases the buffers. */
    void close() {
        reset();
        bytes.close();
        source.release();
        destination.release();
    }

    /** One operation of the seed's random test. */
    int step() {
        return ops.step(bytes, source, destination);
    }
}
