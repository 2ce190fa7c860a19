package io.streamcache.segmentstore.eviction;

/**
 * An immutable snapshot of the resizes a {@link CacheManager} ran ({@link CacheManager#resizeTier});
 * safe to pass between threads.
 *
 * @param grows             resizes that grew a tier.
 * @param shrinks           resizes that shrank a tier to the capacity asked.
 * @param partialShrinks    shrinks that ended at their timeout above the capacity asked (pinned
 *                          or not-yet-durable entries that could not move in time); the buffers
 *                          left went back into service.
 * @param relocatedEntries  entries moved out of draining buffers (into the same tier or a slower one).
 * @param evictedEntries    durable entries dropped from draining buffers because no tier had room.
 * @param releasedBuffers   buffers whose memory shrinks gave back.
 */
public record ResizeStats(long grows, long shrinks, long partialShrinks, long relocatedEntries, long evictedEntries,
                          long releasedBuffers) {
}
