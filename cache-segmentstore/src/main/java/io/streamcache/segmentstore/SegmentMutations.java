package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;

import java.util.concurrent.CompletableFuture;

/**
 * The operations that change segments, as {@link SegmentStore} hands them on once it checked
 * their arguments: applied in memory at once ({@link SegmentTable}), or logged first and applied
 * once durable ({@link DurableSegmentTable}, which decorates the table). The store picks one when
 * it is built, so no operation asks "is there a log?" on its way.
 *
 * <p><b>Threading:</b> implementations are thread-safe; operations on one segment are ordered
 * by its lock. The exceptions and futures are those of the {@link SegmentStore} methods of the
 * same names.
 */
interface SegmentMutations {
    /** The expected offset of an unconditional append: wherever the segment ends. */
    long ANY_OFFSET = -1;

    /**
     * Creates an empty segment; the name was checked ({@link SegmentNames}) and the store was open.
     */
    void create(String name);

    /**
     * Creates an empty segment like {@link #create} but does not wait for its record to be
     * durable: the segment exists (in memory) at once, and its creation is durable when the
     * future completes, or with any later acknowledged operation on it (the log keeps order).
     *
     * @return completes once the creation is durable; exceptionally if it exists or the log failed.
     */
    CompletableFuture<Void> createAsync(String name);

    /**
     * Appends {@code data}'s readable bytes at {@code expectedOffset}, or wherever the segment
     * ends if it is {@link #ANY_OFFSET}, and returns once readers see them.
     *
     * @return the offset the data landed at.
     */
    long append(String name, long expectedOffset, ByteBuf data);

    /**
     * Appends like {@link #append}; the future completes with the offset once readers see the
     * bytes (at once, in memory).
     */
    CompletableFuture<Long> appendAsync(String name, long expectedOffset, ByteBuf data);

    /**
     * @return the segment's final length.
     */
    long seal(String name);

    /** Moves the start offset to {@code offset} (at least 0, checked). */
    void truncate(String name, long offset);

    void delete(String name);
}
