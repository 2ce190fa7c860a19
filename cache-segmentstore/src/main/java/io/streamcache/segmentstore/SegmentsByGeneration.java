package io.streamcache.segmentstore;

import io.streamcache.segmentstore.internal.eviction.EvictionScan;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

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
 * The data path only pushes onto {@link #incoming}, a lock-free stack linked through
 * {@link Segment#nextListed}: one compare-and-set at a segment's transition from no cached entry
 * to one, nothing allocated, no lock. Everything else is confined to the cache manager's pass
 * (one at a time, under the pass lock): it takes the whole stack and files its segments into
 * {@link #lists}, keyed by generation, then walks those.
 *
 * <p>Generations are compared by their difference, as the policies compare them; a segment whose
 * oldest entry is more than 2^30 generations old is filed at that distance (as a policy, such
 * an entry would look young anyway).
 */
final class SegmentsByGeneration {
    private static final int MAX_AGE = 1 << 30;

    /** Segments listed by the data path since the last pass took them. */
    private final AtomicReference<Segment> incoming = new AtomicReference<>();
    /** Pass-confined: the listed segments by listing generation, each list linked through {@link Segment#nextListed}. */
    private final TreeMap<Integer, Segment> lists = new TreeMap<>((a, b) -> Integer.signum(a - b));
    /** Pass-confined: segments moved during a walk, filed again after it. */
    private Segment moved;
    /** Pass-confined: how many segments are in {@link #lists} (for tests and stats). */
    private int size;

    /** Data path, under the segment's lock, which has just set {@code listed}: lock-free push. */
    void push(final Segment segment) {
        Segment head;
        do {
            head = incoming.get();
            segment.nextListed = head;
        } while (!incoming.compareAndSet(head, segment));
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
        fileIncoming(current);
        int busy = 0;
        try {
            for (final Map.Entry<Integer, Segment> list : lists.entrySet()) {
                if (scan.isDone() || !scan.beforeGeneration(list.getKey())) {
                    break;
                }
                final int generation = list.getKey();
                Segment previous = null;
                Segment segment = list.getValue();
                while (segment != null && !scan.isDone()) {
                    final Segment next = segment.nextListed;
                    final long walked = walk(segment, scan, current);
                    if (walked == BUSY) {
                        busy++;
                    }
                    if (walked == BUSY || walked != NONE && (int) walked - generation <= 0) {
                        previous = segment;
                    } else {
                        // Out of this list: to the list of its oldest entry, or unlisted.
                        if (previous == null) {
                            list.setValue(next);
                        } else {
                            previous.nextListed = next;
                        }
                        if (walked != NONE) {
                            segment.nextListed = moved;
                            moved = segment;
                        } else {
                            size--;
                        }
                    }
                    segment = next;
                }
            }
        } finally {
            lists.values().removeIf(head -> head == null);
            fileMoved();
        }
        return busy;
    }

    /** {@link #walk}: the segment was busy. */
    private static final long BUSY = Long.MIN_VALUE;
    /** {@link #walk}: the segment has no cached entry left (now unlisted). */
    private static final long NONE = Long.MAX_VALUE;

    /**
     * Offers one segment's entries to the scan, then re-reads its oldest cached generation under
     * the same lock hold and lists it there; unlists it if it has no cached entry left.
     *
     * @return the segment's oldest cached generation (bounded to {@link #MAX_AGE} before
     *         {@code current}; the segment's new listing generation), {@link #NONE} (now
     *         unlisted) or {@link #BUSY}.
     */
    private static long walk(final Segment segment, final EvictionScan scan, final int current) {
        long from = 0;
        while (true) {
            if (!segment.lock.tryLock()) {
                return BUSY;
            }
            try {
                from = segment.scanLocked(scan, from);
                if (from < 0) {
                    // Exact even if the scan stopped inside the segment: this reads every entry.
                    final long oldest = segment.oldestCachedGenerationLocked(current);
                    if (oldest == Segment.NO_CACHED_ENTRY) {
                        segment.listed = false;
                        return NONE;
                    }
                    final int bounded = bounded((int) oldest, current);
                    segment.listedGeneration = bounded;
                    return bounded;
                }
            } finally {
                segment.lock.unlock();
            }
            // A reader or appender waits: let it in between two relocations.
            Thread.yield();
        }
    }

    /** Files the segments the data path listed since the last pass. */
    private void fileIncoming(final int current) {
        Segment segment = incoming.getAndSet(null);
        while (segment != null) {
            final Segment next = segment.nextListed;
            // listedGeneration was written before the push, which the getAndSet synchronizes with.
            file(segment, bounded(segment.listedGeneration, current));
            size++;
            segment = next;
        }
    }

    private void fileMoved() {
        Segment segment = moved;
        moved = null;
        while (segment != null) {
            final Segment next = segment.nextListed;
            file(segment, segment.listedGeneration);
            segment = next;
        }
    }

    /**
     * Adds a listed segment to the list of {@code key}. The segment's lock is not needed: the
     * data path writes {@code listedGeneration} and {@code nextListed} only of a segment it
     * lists, and this one is listed.
     */
    private void file(final Segment segment, final int key) {
        segment.nextListed = lists.get(key);
        lists.put(key, segment);
    }

    /** @return {@code generation}, or the generation {@link #MAX_AGE} before {@code current} if it is older. */
    private static int bounded(final int generation, final int current) {
        return current - generation > MAX_AGE ? current - MAX_AGE : generation;
    }

    /** Pass-confined: listed segments filed by the last walk (the data path's since then excluded). */
    int size() {
        return size;
    }

    /** Pass-confined: the number of distinct listing generations (for tests). */
    int listCount() {
        return lists.size();
    }
}
