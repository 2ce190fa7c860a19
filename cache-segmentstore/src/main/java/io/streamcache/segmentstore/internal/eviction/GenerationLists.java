package io.streamcache.segmentstore.internal.eviction;

import java.util.Arrays;
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
 *   s7 -> s3 -> null   ──pass files them──►    keys:  [ 12 | 15 | 17 ]      ascending, by difference
 *                                              heads: [ s1 | s3 | s7 ]      s1 -> s4,  s3,  s7 -> s2
 *                                              walked oldest list first; each walked segment is
 *                                              filed again at its oldest cached entry, or unlisted
 *
 *   filing a batch (the incoming stack, or the segments a walk moved):
 *     key in keys ------> pushed on that list's head          (binary search, nothing moves)
 *     key not in keys --> pushed on a list in newKeys/newHeads (a small sorted side array)
 *   then one merge of keys+newKeys into the spare arrays, dropping emptied lists; swap
 * </pre>
 *
 * The lists are two parallel arrays, not a map of boxed generations: a pass allocates nothing
 * once they have grown to the number of distinct listing generations (a
 * {@code TreeMap<Integer, S>} boxed every key looked up or put, ~2 KB a pass).
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
    /** The lists' arrays' first length; they double when full. */
    private static final int INITIAL_LISTS = 16;

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
    /** Pass-confined: the lists' generations in [0, count), ascending (compared by difference). */
    private int[] keys = new int[INITIAL_LISTS];
    /** Pass-confined: each list's first segment (null once a walk emptied it, until it is dropped). */
    private Object[] heads = new Object[INITIAL_LISTS];
    private int count;
    /** Pass-confined: the arrays the next merge writes into (swapped with the lists'). */
    private int[] spareKeys = new int[INITIAL_LISTS];
    private Object[] spareHeads = new Object[INITIAL_LISTS];
    /** Pass-confined: lists of generations not yet in {@link #keys}, sorted as they are, in [0, newCount). */
    private int[] newKeys = new int[INITIAL_LISTS];
    private Object[] newHeads = new Object[INITIAL_LISTS];
    private int newCount;
    /** Pass-confined: a walk emptied a list (its head is null until the next merge drops it). */
    private boolean emptied;
    /** Pass-confined: segments moved during a walk, filed again after it. */
    private S moved;
    /** Pass-confined: how many segments are in the lists. */
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
            for (int list = 0; list < count; list++) {
                final int generation = keys[list];
                if (scan.isDone() || !scan.beforeGeneration(generation)) {
                    break;
                }
                S previous = null;
                S segment = head(list);
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
                            heads[list] = next;
                            emptied |= next == null;
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
        merge();
    }

    private void fileMoved() {
        S segment = moved;
        moved = null;
        while (segment != null) {
            final S next = members.next(segment);
            file(segment, members.listedGeneration(segment));
            segment = next;
        }
        merge();
    }

    /**
     * Puts the segment first in the list of {@code key}: an existing list (found by binary
     * search), or a new one, kept aside in {@link #newKeys} until {@link #merge}.
     */
    private void file(final S segment, final int key) {
        final int at = search(keys, count, key);
        if (at >= 0) {
            members.next(segment, head(at));
            heads[at] = segment;
            return;
        }
        final int pending = search(newKeys, newCount, key);
        if (pending >= 0) {
            members.next(segment, newHead(pending));
            newHeads[pending] = segment;
            return;
        }
        final int insert = -pending - 1;
        if (newCount == newKeys.length) {
            newKeys = Arrays.copyOf(newKeys, 2 * newCount);
            newHeads = Arrays.copyOf(newHeads, 2 * newCount);
        }
        System.arraycopy(newKeys, insert, newKeys, insert + 1, newCount - insert);
        System.arraycopy(newHeads, insert, newHeads, insert + 1, newCount - insert);
        members.next(segment, null);
        newKeys[insert] = key;
        newHeads[insert] = segment;
        newCount++;
    }

    /**
     * Merges the new lists into the lists and drops the emptied ones: one pass over both sorted
     * arrays into the spare pair, which then becomes the lists' (O(lists + new lists); nothing
     * allocated unless the arrays must grow).
     */
    private void merge() {
        if (newCount == 0 && !emptied) {
            return;
        }
        final int capacity = count + newCount;
        if (spareKeys.length < capacity) {
            final int grown = Math.max(capacity, 2 * spareKeys.length);
            spareKeys = new int[grown];
            spareHeads = new Object[grown];
        }
        int i = 0;
        int j = 0;
        int out = 0;
        while (i < count || j < newCount) {
            // Keys are distinct between the two (file() looks in the lists first).
            if (j == newCount || i < count && keys[i] - newKeys[j] < 0) {
                if (heads[i] != null) {
                    spareKeys[out] = keys[i];
                    spareHeads[out++] = heads[i];
                }
                i++;
            } else {
                spareKeys[out] = newKeys[j];
                spareHeads[out++] = newHeads[j];
                j++;
            }
        }
        // The old arrays become the spares: no segment may stay reachable from them.
        Arrays.fill(heads, 0, count, null);
        Arrays.fill(newHeads, 0, newCount, null);
        final int[] oldKeys = keys;
        final Object[] oldHeads = heads;
        keys = spareKeys;
        heads = spareHeads;
        spareKeys = oldKeys;
        spareHeads = oldHeads;
        count = out;
        newCount = 0;
        emptied = false;
    }

    /**
     * @return the index of {@code key} in {@code sorted[0, n)}, or {@code -(insertion point) - 1}
     *         (generations compared by their difference, as everywhere in eviction).
     */
    private static int search(final int[] sorted, final int n, final int key) {
        int low = 0;
        int high = n - 1;
        while (low <= high) {
            final int mid = (low + high) >>> 1;
            final int difference = sorted[mid] - key;
            if (difference < 0) {
                low = mid + 1;
            } else if (difference > 0) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -(low + 1);
    }

    @SuppressWarnings("unchecked")
    private S head(final int list) {
        return (S) heads[list];
    }

    @SuppressWarnings("unchecked")
    private S newHead(final int list) {
        return (S) newHeads[list];
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
        return count;
    }
}
