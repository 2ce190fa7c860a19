package io.streamcache.log.internal.recovery;

import org.agrona.collections.Int2ObjectHashMap;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * {@link LogReplay}'s segment states by id: a table indexed by id for the ids a store hands out
 * (from 0 up, never reused, so dense), a hash map for the rest. Confined to the replay's thread
 * (read by the workers of {@link RecoveryWorkers} only after the replay handed them the states).
 *
 * <pre>
 *  id &lt; DENSE_LIMIT (2^24):  directory (grows by doubling)      page p (1,024 references)
 *                            +--------+--------+-----           +-------+-------+-----+
 *                            | page 0 | page 1 | ...   --------&gt;| id    | id+1  | ... |   id = p * 1024 + slot
 *                            +--------+--------+-----           +-------+-------+-----+
 *  any other id (unsigned):  Int2ObjectHashMap (a log written by a store never has one)
 * </pre>
 * <b>Why</b>: the replay looks the segment of every record up; with 250,000 segments
 * an {@code Int2ObjectHashMap} probe was the hottest frame of an open after a kill (114 of 1,150
 * samples of the opening thread), a dependent miss into the map's arrays before the miss into
 * the state. Here it is two array loads, and {@link #forEachInIdOrder} hands the states out in
 * id order without the sort {@link LogReplay#finish()} needed. At most 16,384 page references
 * (64 KiB) plus 4 KiB per page of 1,024 ids in use.
 */
final class SegmentStates {
    /** Ids per page. */
    static final int PAGE_SHIFT = 10;
    static final int PAGE_IDS = 1 << PAGE_SHIFT;
    /** Ids from here on (unsigned) are kept in the hash map. */
    static final int DENSE_LIMIT = 1 << 24;

    private SegmentState[][] pages = new SegmentState[16][];
    private final Int2ObjectHashMap<SegmentState> sparse = new Int2ObjectHashMap<>();
    private int size;

    private static boolean dense(final int id) {
        return (id & -DENSE_LIMIT) == 0;
    }

    /** @return the state of {@code id} (live or deleted), or null. */
    SegmentState get(final int id) {
        if (dense(id)) {
            final int p = id >>> PAGE_SHIFT;
            final SegmentState[][] directory = pages;
            if (p >= directory.length) {
                return null;
            }
            final SegmentState[] page = directory[p];
            return page == null ? null : page[id & (PAGE_IDS - 1)];
        }
        return sparse.get(id);
    }

    /** Puts {@code state} under its id, replacing any state there. */
    void put(final SegmentState state) {
        final int id = state.id;
        if (!dense(id)) {
            if (sparse.put(id, state) == null) {
                size++;
            }
            return;
        }
        final int p = id >>> PAGE_SHIFT;
        if (p >= pages.length) {
            pages = Arrays.copyOf(pages, Math.max(p + 1, pages.length * 2));
        }
        SegmentState[] page = pages[p];
        if (page == null) {
            page = new SegmentState[PAGE_IDS];
            pages[p] = page;
        }
        final int slot = id & (PAGE_IDS - 1);
        if (page[slot] == null) {
            size++;
        }
        page[slot] = state;
    }

    /** Sizes the directory for ids below {@code ids} (no copying while they go in). */
    void reserve(final int ids) {
        final int needed = (int) Math.min(DENSE_LIMIT >>> PAGE_SHIFT, ((long) Math.max(0, ids) + PAGE_IDS - 1) >>> PAGE_SHIFT);
        if (needed > pages.length) {
            pages = Arrays.copyOf(pages, needed);
        }
    }

    /** @return the states held, live and deleted. */
    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Hands every state (live and deleted) to {@code action}, in unsigned id order. */
    void forEachInIdOrder(final Consumer<SegmentState> action) {
        for (final SegmentState[] page : pages) {
            if (page == null) {
                continue;
            }
            for (final SegmentState state : page) {
                if (state != null) {
                    action.accept(state);
                }
            }
        }
        if (!sparse.isEmpty()) {
            final long[] ids = new long[sparse.size()];
            int n = 0;
            for (final int id : sparse.keySet()) {
                ids[n++] = Integer.toUnsignedLong(id);
            }
            Arrays.sort(ids);
            for (final long id : ids) {
                action.accept(sparse.get((int) id));
            }
        }
    }

    /** @return every state (live and deleted), in unsigned id order. */
    SegmentState[] toArrayInIdOrder() {
        final SegmentState[] out = new SegmentState[size];
        final int[] n = {0};
        forEachInIdOrder(state -> out[n[0]++] = state);
        return out;
    }
}
