package io.streamcache.bench.sim;

/**
 * One cache under simulation, driven event by event by {@link Simulator}: confined to the
 * simulating thread.
 */
interface SimCache {
    /**
     * An APPEND (the block is new and enters the cache) or a READ (a hit, or a miss that reads
     * the block into the cache).
     *
     * @param trace the trace.
     * @param i     the event's index.
     * @return whether the block was cached before this event.
     */
    boolean access(Trace trace, int i);

    /** A segment is created. */
    default void create(final Trace trace, final int i) {
    }

    /** A segment is deleted: its blocks leave the cache. */
    void delete(Trace trace, int i);

    /** A reader is registered (OPEN_READER), or closed (CLOSE_READER); only the reader-aware policy cares. */
    default void reader(final Trace trace, final int i) {
    }

    /** @return blocks cached now. */
    long used();

    /** @return inserts that found no room (the block was not cached); 0 for a sound cache. */
    default long failedInserts() {
        return 0;
    }
}
