package io.streamcache.log.internal;

import java.util.Arrays;

/**
 * Two {@code int} columns indexed by segment id, in pages: the rows of {@link LogSegmentTable}.
 * Confined to the log writer's thread, like the table.
 *
 * <pre>
 *  directory (one slot per 1,024 ids, doubled as ids grow)
 *  state: [ page 0 | page 1 | null | page 3 | ... ]      used: [ 1024 | 17 | 0 | 3 | ... ]
 *            |                                                  rows of the page whose state is not 0
 *            v
 *          int[1024]: state of ids 1024p .. 1024p+1023   (0: no row; the table gives the other values meaning)
 *  head:  [ page 0 | page 1 | null | page 3 | ... ]      same shape: an int per id (0 while the row has no nodes)
 * </pre>
 *
 * <p>The store hands out segment ids in increasing order and never reuses one, so the live ids
 * form a band that moves up as segments are created and deleted: a page is made with its first
 * row and dropped (both columns) when its last row's state returns to 0, so memory follows the
 * live rows (8 bytes a row, in pages of 8 KB) plus the directory (12 bytes per 1,024 ids ever used).
 * A row's head must be 0 before its state is set to 0.
 */
final class SegmentRows {
    static final int PAGE_SHIFT = 10;
    static final int PAGE_SIZE = 1 << PAGE_SHIFT;
    private static final int MASK = PAGE_SIZE - 1;

    private int[][] state = new int[0][];
    private int[][] head = new int[0][];
    private int[] used = new int[0];
    private int pages;

    private static int checkId(final int id) {
        if (id < 0) {
            throw new IllegalArgumentException("segment id=" + id + " is negative");
        }
        return id;
    }

    /** @return the row's state, 0 if it has none (a negative id has none: {@code >>>} puts it past the directory). */
    int state(final int id) {
        final int p = id >>> PAGE_SHIFT;
        if (p >= state.length) {
            return 0;
        }
        final int[] page = state[p];
        return page == null ? 0 : page[id & MASK];
    }

    /** Sets the row's state; 0 removes the row (its head must be 0 by then). */
    void state(final int id, final int value) {
        final int p = checkId(id) >>> PAGE_SHIFT;
        if (value == 0) {
            if (p >= state.length || state[p] == null || state[p][id & MASK] == 0) {
                return;
            }
            if (head[p][id & MASK] != 0) {
                throw new IllegalStateException("segment id=" + id + " still has nodes");
            }
            state[p][id & MASK] = 0;
            if (--used[p] == 0) {
                state[p] = null;
                head[p] = null;
                pages--;
            }
            return;
        }
        if (p >= state.length) {
            final int length = Math.max(p + 1, 2 * state.length);
            state = Arrays.copyOf(state, length);
            head = Arrays.copyOf(head, length);
            used = Arrays.copyOf(used, length);
        }
        int[] page = state[p];
        if (page == null) {
            page = new int[PAGE_SIZE];
            state[p] = page;
            head[p] = new int[PAGE_SIZE];
            pages++;
        }
        if (page[id & MASK] == 0) {
            used[p]++;
        }
        page[id & MASK] = value;
    }

    /** @return the row's head, 0 if it has no row or none. */
    int head(final int id) {
        final int p = id >>> PAGE_SHIFT;
        if (p >= head.length) {
            return 0;
        }
        final int[] page = head[p];
        return page == null ? 0 : page[id & MASK];
    }

    /** Sets the head of an existing row. */
    void head(final int id, final int value) {
        final int p = checkId(id) >>> PAGE_SHIFT;
        if (p >= state.length || state[p] == null || state[p][id & MASK] == 0) {
            throw new IllegalStateException("segment id=" + id + " has no row");
        }
        head[p][id & MASK] = value;
    }

    /** Visits every row whose head is not 0. */
    void forEachHead(final HeadVisitor visitor) {
        for (int p = 0; p < head.length; p++) {
            final int[] page = head[p];
            if (page == null) {
                continue;
            }
            for (int i = 0; i < PAGE_SIZE; i++) {
                if (page[i] != 0) {
                    visitor.visit((p << PAGE_SHIFT) | i, page[i]);
                }
            }
        }
    }

    /** Receives a row of {@link #forEachHead}. */
    @FunctionalInterface
    interface HeadVisitor {
        void visit(int id, int head);
    }

    /** @return pages held (tests and footprint). */
    int pages() {
        return pages;
    }

    /** @return heap bytes of the columns, headers excluded: pages and directory (references counted as 8 bytes: an upper bound). */
    long bytes() {
        return (long)pages * 2 * PAGE_SIZE * Integer.BYTES + (long)state.length * (2 * 8 + Integer.BYTES);
    }
}
