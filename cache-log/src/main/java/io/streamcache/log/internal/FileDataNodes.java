package io.streamcache.log.internal;

import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * A pool of list nodes {@code (file number, end offset, next)} in off-heap pages of primitive
 * columns: {@link LogSegmentTable}'s lists of the files in which a segment has live data.
 * Confined to the log writer's thread, like the table.
 *
 * <pre>
 *  node n -&gt; page n &gt;&gt;&gt; 10, slot s = n &amp; 1023; a page is one direct buffer of 20 KiB:
 *  0                    8 KiB                 16 KiB          20 KiB
 *  +--------------------+---------------------+---------------+
 *  | file: long[1024]   | end: long[1024]     | next: int[1024] |   next = node + 1, 0 = none
 *  +--------------------+---------------------+---------------+
 *  file of n at FILE_OFFSET + 8 s, end at END_OFFSET + 8 s, next at NEXT_OFFSET + 4 s
 *
 *  free list: free -&gt; n7 -&gt; n2 -&gt; ...  (through next; a freed node is taken again first)
 * </pre>
 * Nodes are numbered from 0; pages are made as the pool grows and kept (20 bytes a node of the
 * high-water mark): a node is reused, never copied. <b>Off the heap</b>: while the log
 * only grows (no segment truncated or deleted) a node is added for nearly every (segment, file)
 * pair that gets data, one per DATA record with many segments; on the heap that was 20 bytes of
 * allocation per append. Now the heap holds one direct buffer object per 1,024 nodes and the
 * directory (copied when it doubles), so an append allocates nothing on the heap in steady state;
 * the pages are direct memory outside the cache's capacity, reported by {@link #offHeapBytes()}
 * and given back when the table is garbage collected (as the SNAPSHOT image's buffer is).
 */
final class FileDataNodes {
    /** No node. */
    static final int NIL = -1;
    private static final int PAGE_SHIFT = 10;
    private static final int PAGE_SIZE = 1 << PAGE_SHIFT;
    private static final int MASK = PAGE_SIZE - 1;
    private static final int FILE_OFFSET = 0;
    private static final int END_OFFSET = FILE_OFFSET + PAGE_SIZE * Long.BYTES;
    private static final int NEXT_OFFSET = END_OFFSET + PAGE_SIZE * Long.BYTES;
    /** Bytes of one page: the three columns. */
    static final int PAGE_BYTES = NEXT_OFFSET + PAGE_SIZE * Integer.BYTES;

    /** The pages' buffers (they keep the memory alive) and their addresses, by page. */
    private ByteBuffer[] pages = new ByteBuffer[0];
    private long[] addresses = new long[0];
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
            final int p = made >>> PAGE_SHIFT;
            if (p >= pages.length) {
                final int length = Math.max(4, 2 * pages.length);
                pages = Arrays.copyOf(pages, length);
                addresses = Arrays.copyOf(addresses, length);
            }
            if (pages[p] == null) {
                final ByteBuffer page = ByteBuffer.allocateDirect(PAGE_BYTES);
                pages[p] = page;
                addresses[p] = BufferUtil.address(page);
            }
            n = made++;
        }
        final long page = page(n);
        final long slot = n & MASK;
        UNSAFE.putLong(page + FILE_OFFSET + slot * Long.BYTES, fileNumber);
        UNSAFE.putLong(page + END_OFFSET + slot * Long.BYTES, endOffset);
        UNSAFE.putInt(page + NEXT_OFFSET + slot * Integer.BYTES, nextNode + 1);
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
        return UNSAFE.getLong(page(n) + FILE_OFFSET + (long)(n & MASK) * Long.BYTES);
    }

    long end(final int n) {
        return UNSAFE.getLong(page(n) + END_OFFSET + (long)(n & MASK) * Long.BYTES);
    }

    void end(final int n, final long value) {
        UNSAFE.putLong(page(n) + END_OFFSET + (long)(n & MASK) * Long.BYTES, value);
    }

    int next(final int n) {
        return UNSAFE.getInt(page(n) + NEXT_OFFSET + (long)(n & MASK) * Integer.BYTES) - 1;
    }

    void next(final int n, final int value) {
        UNSAFE.putInt(page(n) + NEXT_OFFSET + (long)(n & MASK) * Integer.BYTES, value + 1);
    }

    /** @return the address of node {@code n}'s page; a node never made is refused (the memory is raw). */
    private long page(final int n) {
        if (n < 0 || n >= made) {
            throw new IllegalStateException("file node " + n + " was never allocated (nodes made: " + made + ")");
        }
        return addresses[n >>> PAGE_SHIFT];
    }

    /** @return nodes in use. */
    int live() {
        return live;
    }

    /** @return heap bytes of the directories and the pages' buffer objects, headers excluded (references counted as 8 bytes: an upper bound). */
    long heapBytes() {
        return 2L * 8 * pages.length + 64L * pageCount();
    }

    /** @return direct memory of the pages. */
    long offHeapBytes() {
        return (long)pageCount() * PAGE_BYTES;
    }

    private int pageCount() {
        return (made + PAGE_SIZE - 1) >>> PAGE_SHIFT;
    }
}
