package io.streamcache.segmentstore.eviction;

/**
 * An immutable snapshot of the counters of the pool of dead read-index entries that the segment
 * stores on one {@link CacheManager}'s cache share: entries that leave a segment's tree (coalesced
 * after an eviction, truncated, deleted) go back to the pool, and new entries (appends, gaps,
 * fills) are taken from it, so that a full cache's steady appends allocate no entry. Safe to
 * pass between threads; the counters are read without stopping their users, so a snapshot taken
 * under load is exact per field, not across fields.
 *
 * <pre>
 *   an entry is needed --- pool has one ---> taken      (no allocation)
 *                      \-- pool is empty --> made       (a new 48-byte entry)
 *   an entry dies ------- pool has room ---> recycled   (kept for reuse)
 *                      \-- pool is full ---> dropped    (left to the garbage collector)
 * </pre>
 *
 * In the steady state of a full cache {@code made} and {@code dropped} stop growing; a rising
 * {@code made} with a rising {@code dropped} means entries die in bursts larger than the pool
 * (see docs/tuning.md, "What rising counters mean").
 *
 * @param taken    entries reused from the pool since it was made.
 * @param made     entries made new because the pool was empty.
 * @param recycled entries given back and kept by the pool.
 * @param dropped  entries given back but dropped because the pool was full.
 * @param pooled   entries in the pool at the snapshot (approximate while in use).
 * @param capacity how many entries the pool keeps at most.
 */
public record EntryPoolStats(long taken, long made, long recycled, long dropped, int pooled, int capacity) {
}
