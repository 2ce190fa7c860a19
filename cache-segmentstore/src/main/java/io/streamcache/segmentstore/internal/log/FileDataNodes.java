package io.streamcache.segmentstore.internal.log;

import java.util.Arrays;

/**
 * A pool of list nodes {@code (file number, end offset, next)} in pages of primitive columns:
 * {@link LogSegmentTable}'s lists of the files in which a segment has live data. Confined to
 * the log writer's thread, like the table.
 *
 * <pre>
 *  node n -&gt; page n &gt;&gt;&gt; 10, slot n &amp; 1023
 *  file: long[1024] per page   end: long[1024] per page   next: int[1024] per page (node + 1, 0 = none)
 *
 *  free list: free -&gt; n7 -&gt; n2 -&gt; ...  (through next; a freed node is taken again first)
 * </pre>
 * Nodes are numbered from 0; pages are made as the pool grows and kept (20 bytes a node of the
 * high-water mark): a node is reused, never copied, so growth leaves no garbage but a new page.
 */
final class FileDataNodes {
    /** No node. */
    static final int NIL = -1;
    private static final int PAGE_SHIFT = 10;
    private static final int PAGE_SIZE = 1 << PAGE_SHIFT;
    private static final int MASK = PAGE_SIZE - 1;

    private long[][] file = new long[0][];
    private long[][] end = new long[0][];
    private int[][] next = new int[0][];
    /** Nodes ever made (the high-water mark). */
    private int made;
    private int free = NIL;
    private int live;

    /** @return a node holding the three values. */
    int allocate(final long fileNumber, final long endOffset, final int nextNode) {
        int n = free;
        if (n != NIL) {
            free = next(n);
        } else {
            if (made == Integer.MAX_VALUE - 1) {
                throw new IllegalStateException("the log's segment table holds the most file entries it may: " + made);
            }
            n = made++;
            final int p = n >>> PAGE_SHIFT;
            if (p >= file.length) {
                final int length = Math.max(4, 2 * file.length);
                file = Arrays.copyOf(file, length);
                end = Arrays.copyOf(end, length);
                next = Arrays.copyOf(next, length);
            }
            if (file[p] == null) {
                file[p] = new long[PAGE_SIZE];
                end[p] = new long[PAGE_SIZE];
                next[p] = new int[PAGE_SIZE];
            }
        }
        file[n >>> PAGE_SHIFT][n & MASK] = fileNumber;
        end[n >>> PAGE_SHIFT][n & MASK] = endOffset;
        next(n, nextNode);
        live++;
        return n;
    }

    /** Gives a node back. */
    void free(final int n) {
        next(n, free);
        free = n;
        live--;
    }

    long file(final int n) {
        return file[n >>> PAGE_SHIFT][n & MASK];
    }

    long end(final int n) {
        return end[n >>> PAGE_SHIFT][n & MASK];
    }

    void end(final int n, final long value) {
        end[n >>> PAGE_SHIFT][n & MASK] = value;
    }

    int next(final int n) {
        return next[n >>> PAGE_SHIFT][n & MASK] - 1;
    }

    void next(final int n, final int value) {
        next[n >>> PAGE_SHIFT][n & MASK] = value + 1;
    }

    /** @return nodes in use. */
    int live() {
        return live;
    }

    /** @return heap bytes of the pages and directories, headers excluded (references counted as 8 bytes: an upper bound). */
    long bytes() {
        final long pages = (made + PAGE_SIZE - 1) >>> PAGE_SHIFT;
        return pages * PAGE_SIZE * (2L * Long.BYTES + Integer.BYTES) + 3L * 8 * file.length;
    }
}
