package io.streamcache.segmentstore.internal.eviction;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Segments that hold cached entries, listed by a lower bound of the generation of their oldest
 * cached entry, so that an eviction pass can walk them oldest first and stop when it has what it
 * needs ({@link EvictionSource#scanOldestFirst}). Generic over what a segment is: the store's
 * segments ({@code SegmentsByGeneration}) and the eviction simulator's both use it, through a
 * {@link Members} that reaches the link and listing fields and walks one segment.
 *
 * <pre>
 *   incoming (lock-free stack, data path)      lists (pass-confined), by listing generation
 *   s7 -> s3 -> null   ──pass files them──►    g=12: s1 -> s4        g=15: s3        g=17: s7 -> s2
 *                                              walked oldest list first; each walked segment is
 *                                              filed again at its oldest cached entry, or unlisted
 * </pre>
 *
 * <h2>The invariant</h2>
 * A segment with a cached entry is listed, and no cached entry of it is older than its listing
 * generation. The data path lists a segment at the transition from no cached entry to one (at
 * that entry's generation) and {@link #push pushes} it; an entry's generation only moves forward,
 * so the bound stays true until a pass walks the segment, which re-lists it at its oldest cached
 * entry or unlists it ({@link Members#walk}).
 *
 * <h2>Threading</h2>
 * {@link #push} is lock-free (one compare-and-set, nothing allocated) for the data path; the
 * rest is confined to the pass (one at a time). Generations are compared by their difference; a
 * segment whose oldest entry is more than 2^30 generations old is filed at that distance.
 *
 * @param <S> the segment type.
 */
public final class GenerationLists<S> {
    /** {@link Members#walk}: the segment was busy. */
    public static final long BUSY = Long.MIN_VALUE;
    /** {@link Members#walk}: the segment has no cached entry left (it is now unlisted). */
    public static final long NONE = Long.MAX_VALUE;
    private static final int MAX_AGE = 1 << 30;

    /**
     * How the lists reach a segment's fields and walk it.
     *
     * @param <S> the segment type.
     */
    public interface Members<S> {
        /** @return the next segment in the segment's list (or in the incoming stack). */
        S next(S segment);

        /** Links the segment to the next one in its list. */
        void next(S segment, S next);

        /** @return the generation the segment is listed at (written before it was pushed, or by its last walk). */
        int listedGeneration(S segment);

        /**
         * Offers the segment's entries to the scan (under whatever lock the segment needs, taken
         * without blocking), then, under the same lock hold, reads its oldest cached generation:
         * records it, {@link #bounded bounded}, as the segment's listing generation and returns it,
         * or unlists the segment and returns {@link #NONE} if it has no cached entry.
         *
         * @return the new listing generation, {@link #NONE} or {@link #BUSY}.
         */
        long walk(S segment, EvictionScan scan, int current);
    }

    private final Members<S> members;
    /** Segments listed by the data path since the last pass took them. */
    private final AtomicReference<S> incoming = new AtomicReference<>();
    /** Pass-confined: the listed segments by listing generation, each list linked through {@link Members#next}. */
    private final TreeMap<Integer, S> lists = new TreeMap<>((a, b) -> Integer.signum(a - b));
    /** Pass-confined: segments moved during a walk, filed again after it. */
    private S moved;
    /** Pass-confined: how many segments are in {@link #lists}. */
    private int size;

    /** @param members how to reach a segment's fields and walk it. */
    public GenerationLists(final Members<S> members) {
        this.members = members;
    }

    /** Data path: the segment has just been listed (its listing generation written): lock-free push. */
    public void push(final S segment) {
        S head;
        do {
            head = incoming.get();
            members.next(segment, head);
        } while (!incoming.compareAndSet(head, segment));
    }

    /**
     * Walks the listed segments oldest list first and offers their entries to {@code scan},
     * asking {@link EvictionScan#beforeGeneration} before each list; files every segment it
     * walked again at its oldest cached entry, and drops those the walk unlisted. Pass-confined.
     *
     * @param current the manager's current generation.
     * @return segments skipped because they were busy.
     */
    public int scan(final EvictionScan scan, final int current) {
        fileIncoming(current);
        int busy = 0;
        try {
            for (final Map.Entry<Integer, S> list : lists.entrySet()) {
                if (scan.isDone() || !scan.beforeGeneration(list.getKey())) {
                    break;
                }
                final int generation = list.getKey();
                S previous = null;
                S segment = list.getValue();
                while (segment != null && !scan.isDone()) {
                    final S next = members.next(segment);
                    final long walked = members.walk(segment, scan, current);
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
                            members.next(previous, next);
                        }
                        if (walked != NONE) {
                            members.next(segment, moved);
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

    /** Files the segments the data path listed since the last pass. */
    private void fileIncoming(final int current) {
        S segment = incoming.getAndSet(null);
        while (segment != null) {
            final S next = members.next(segment);
            // The listing generation was written before the push, which the getAndSet synchronizes with.
            file(segment, bounded(members.listedGeneration(segment), current));
            size++;
            segment = next;
        }
    }

    private void fileMoved() {
        S segment = moved;
        moved = null;
        while (segment != null) {
            final S next = members.next(segment);
            file(segment, members.listedGeneration(segment));
            segment = next;
        }
    }

    private void file(final S segment, final int key) {
        members.next(segment, lists.get(key));
        lists.put(key, segment);
    }

    /** @return {@code generation}, or the generation 2^30 before {@code current} if it is older. */
    public static int bounded(final int generation, final int current) {
        return current - generation > MAX_AGE ? current - MAX_AGE : generation;
    }

    /** Pass-confined: listed segments filed by the last walk (the data path's since then excluded). */
    public int size() {
        return size;
    }

    /** Pass-confined: the number of distinct listing generations. */
    public int listCount() {
        return lists.size();
    }
}
