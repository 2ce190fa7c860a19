package io.streamcache.segmentstore;

import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.GenerationLists;

/**
 * A store's segments that hold cached entries, listed by a lower bound of the generation of
 * their oldest cached entry, so that an eviction pass can walk them oldest first and stop when
 * it has what it needs, instead of walking every segment of the table (see
 * {@code EvictionSource#scanOldestFirst}).
 *
 * <h2>The invariant</h2>
 * A segment with a cached entry is listed ({@link Segment#listed}), and no cached entry of it is
 * older than its {@link Segment#listedGeneration}. The data path keeps it under the segment's
 * lock: the segment gains a cached entry only through an append or a fill, which stamp the
 * entry with the current generation and call {@code Segment.listLocked}; an unlisted segment is
 * then listed at that entry's generation. An entry's generation only moves forward (a use stamps
 * the current one), so the bound stays true until a pass moves the segment. A pass moves or
 * unlists a segment only under its lock, after reading its oldest cached generation.
 *
 * <h2>Threading</h2>
 * The data path only pushes onto the incoming stack, linked through {@link Segment#nextListed}:
 * one compare-and-set at a segment's transition from no cached entry to one, nothing allocated,
 * no lock. Everything else is confined to the cache manager's pass (one at a time, under the pass
 * lock): it takes the whole stack and files its segments into lists keyed by generation, then
 * walks those. The lists are {@link GenerationLists}, shared with the eviction simulator; this
 * class is how they reach a {@link Segment}: its fields, and its walk under its lock.
 *
 * <p>Generations are compared by their difference, as the policies compare them; a segment whose
 * oldest entry is more than 2^30 generations old is filed at that distance (as a policy, such
 * an entry would look young anyway).
 */
final class SegmentsByGeneration {
    private final GenerationLists<Segment> lists = new GenerationLists<>(new GenerationLists.Members<>() {
        @Override
        public Segment next(final Segment segment) {
            return segment.nextListed;
        }

        @Override
        public void next(final Segment segment, final Segment next) {
            segment.nextListed = next;
        }

        @Override
        public int listedGeneration(final Segment segment) {
            return segment.listedGeneration;
        }

        @Override
        public long walk(final Segment segment, final EvictionScan scan, final int current) {
            return SegmentsByGeneration.walk(segment, scan, current);
        }
    });

    /** Data path, under the segment's lock, which has just set {@code listed}: lock-free push. */
    void push(final Segment segment) {
        lists.push(segment);
    }

    /**
     * Walks the listed segments oldest list first and offers their entries to {@code scan}
     * (taking each segment's lock with {@code tryLock}, as every eviction walk does), asking
     * {@link EvictionScan#beforeGeneration} before each list; moves every segment it walked
     * to the list of its oldest cached entry, and unlists those with none. Pass-confined.
     *
     * @param current the manager's current generation.
     * @return segments skipped because another thread held their lock.
     */
    int scan(final EvictionScan scan, final int current) {
        return lists.scan(scan, current);
    }

    /**
     * Offers one segment's entries to the scan, then re-reads its oldest cached generation under
     * the same lock hold and lists it there; unlists it if it has no cached entry left.
     *
     * @return the segment's oldest cached generation (bounded to 2^30 before {@code current};
     *         the segment's new listing generation), {@link GenerationLists#NONE} (now unlisted)
     *         or {@link GenerationLists#BUSY}.
     */
    private static long walk(final Segment segment, final EvictionScan scan, final int current) {
        if (!segment.tryLock()) {
            return GenerationLists.BUSY;
        }
        try {
            final long from = segment.scanLocked(scan, 0);
            if (from < 0) {
                // Exact even if the scan stopped inside the segment: this reads every entry.
                final long oldest = segment.oldestCachedGenerationLocked(current);
                if (oldest == Segment.NO_CACHED_ENTRY) {
                    segment.listed = false;
                    return GenerationLists.NONE;
                }
                final int bounded = GenerationLists.bounded((int) oldest, current);
                segment.listedGeneration = bounded;
                return bounded;
            }
        } finally {
            segment.unlock();
        }
        // A reader or appender queued for the lock during a relocation: it goes first, and the
        // segment stays listed where it is (busy) for a later pass, instead of this walk taking
        // the lock back; no spin or yield (the scan may run on the log's completion thread).
        return GenerationLists.BUSY;
    }

    /** Pass-confined: listed segments filed by the last walk (the data path's since then excluded). */
    int size() {
        return lists.size();
    }

    /** Pass-confined: the number of distinct listing generations (for tests). */
    int listCount() {
        return lists.listCount();
    }
}
