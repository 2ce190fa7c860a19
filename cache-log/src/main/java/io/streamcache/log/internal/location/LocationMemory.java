package io.streamcache.log.internal.location;

import org.agrona.BufferUtil;
import org.agrona.UnsafeAccess;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Off-heap memory of the {@link LocationIndex}es of one log: chunks of a power-of-two size
 * from 8 bytes to 8 MiB, carved out of large direct slabs and recycled through one free list
 * per size, so that a small index takes a few small chunks of a shared slab, not a page of
 * its own, and a chunk given back (truncation, deletion) is the next one of its size handed out.
 * <pre>
 *  slabs (direct ByteBuffers: 64 KiB, then doubling up to 8 MiB each)
 *  +--------+----+--+--+----------------+--------- ... ---+.................+
 *  | 64 B   |32 B|8 |16| 4 KB           |                 |  not yet carved |
 *  +--------+----+--+--+----------------+--------- ... ---+.................+
 *  ^ slab base                                             ^ bump       slab end ^
 *
 *  free lists, one per size 2^3 .. 2^23 (the link is the chunk's first 8 bytes):
 *  free[6] --&gt; [64 B chunk | next] --&gt; [64 B chunk | next] --&gt; 0
 * </pre>
 * A chunk is taken from its size's free list, else carved at the bump pointer; when the rest of
 * the current slab is too small, that rest is cut into free chunks of the largest sizes that fit
 * and a new slab is allocated. Memory is given back to the system only by {@link #close()}.
 * Chunks are addressed by their absolute address (a {@code long}) and read and written by the
 * index with {@link org.agrona.UnsafeAccess#UNSAFE}: no bounds are checked, so an index must
 * only touch the chunks it holds, and nobody may touch them after {@link #close()}.
 *
 * <p><b>Accounting:</b> this is metadata of the log, outside the cache's configured memory bound,
 * in direct memory (it counts against {@code -XX:MaxDirectMemorySize}). {@link #reservedBytes()}
 * is what the slabs hold, {@link #usedBytes()} what the indexes hold; the difference is free
 * chunks and the uncarved rest of the last slab. It grows with the records the indexes hold
 * (about 8.4 bytes per DATA record, 128 bytes per index) and is not bounded otherwise.
 *
 * <p><b>Threading:</b> thread-safe: {@link #allocate} and {@link #free} hold the memory's
 * monitor (a chunk is taken or given back once per up to 512 records of an index, not per
 * record). After recovery the log writer's thread is its only user.
 *
 * <p><b>Poisoning</b> (tests): with {@code poison}, a freed chunk is filled with -1 bytes (past its
 * 8-byte link), so a reader that used a chunk after its return would read values no index holds.
 */
public final class LocationMemory implements AutoCloseable {
    /** log2 of the smallest chunk: 8 bytes. */
    public static final int MIN_LOG = 3;
    /** log2 of the largest chunk: 8 MiB. */
    public static final int MAX_LOG = 23;
    private static final int FIRST_SLAB_LOG = 16;

    private final boolean poison;
    private final List<ByteBuffer> slabs = new ArrayList<>();
    private final long[] free = new long[MAX_LOG + 1];
    private long bump;
    private long bumpEnd;
    private long reservedBytes;
    private long usedBytes;
    private long carved;
    private long reused;
    private boolean closed;

    public LocationMemory() {
        this(false);
    }

    /**
     * @param poison fill freed chunks with -1 (tests).
     */
    public LocationMemory(final boolean poison) {
        this.poison = poison;
    }

    /** @return whether freed chunks are filled with -1 (tests). */
    public boolean poisoned() {
        return poison;
    }

    /**
     * @param log log2 of the chunk's size, in [{@link #MIN_LOG}, {@link #MAX_LOG}].
     * @return the address of a chunk of {@code 1 << log} bytes, 8-byte aligned, contents undefined.
     * @throws IllegalArgumentException if {@code log} is out of range.
     * @throws IllegalStateException    if the memory is closed.
     * @throws OutOfMemoryError         if direct memory is exhausted.
     */
    public synchronized long allocate(final int log) {
        checkLog(log);
        if (closed) {
            throw new IllegalStateException("location memory is closed");
        }
        final long size = 1L << log;
        final long head = free[log];
        if (head != 0) {
            free[log] = UnsafeAccess.UNSAFE.getLong(head);
            usedBytes += size;
            reused++;
            return head;
        }
        if (bumpEnd - bump < size) {
            newSlab(log);
        }
        final long address = bump;
        bump += size;
        usedBytes += size;
        carved++;
        return address;
    }

    /**
     * Takes back a chunk from {@link #allocate} that nothing refers to any more.
     *
     * @param log the {@code log} it was allocated with.
     */
    public synchronized void free(final long address, final int log) {
        checkLog(log);
        if (closed) {
            return;
        }
        usedBytes -= 1L << log;
        push(address, log);
    }

    private void push(final long address, final int log) {
        if (poison && log > MIN_LOG) {
            UnsafeAccess.UNSAFE.setMemory(address + 8, (1L << log) - 8, (byte) -1);
        }
        UnsafeAccess.UNSAFE.putLong(address, free[log]);
        free[log] = address;
    }

    private void newSlab(final int log) {
        // The rest of the current slab becomes free chunks, largest first (it is a multiple of 8).
        while (bumpEnd - bump >= 1L << MIN_LOG) {
            final int piece = Math.min(MAX_LOG, 63 - Long.numberOfLeadingZeros(bumpEnd - bump));
            push(bump, piece);
            bump += 1L << piece;
        }
        final int slabLog = Math.max(log, Math.min(MAX_LOG, FIRST_SLAB_LOG + slabs.size()));
        // 8 bytes more than the slab's size, in case the base is not 8-byte aligned.
        final ByteBuffer slab = ByteBuffer.allocateDirect((1 << slabLog) + 8);
        final long base = new UnsafeBuffer(slab).addressOffset();
        slabs.add(slab);
        bump = (base + 7) & ~7L;
        bumpEnd = bump + (1L << slabLog);
        reservedBytes += slab.capacity();
    }

    private static void checkLog(final int log) {
        if (log < MIN_LOG || log > MAX_LOG) {
            throw new IllegalArgumentException("log=" + log + " must be in [" + MIN_LOG + ", " + MAX_LOG + "]");
        }
    }

    /** @return log2 of the smallest chunk holding {@code bytes} (at least {@link #MIN_LOG}). */
    public static int logFor(final long bytes) {
        return Math.max(MIN_LOG, 64 - Long.numberOfLeadingZeros(bytes - 1));
    }

    /** @return bytes of direct memory the slabs hold (0 once closed). */
    public synchronized long reservedBytes() {
        return reservedBytes;
    }

    /** @return bytes of the chunks lent out. */
    public synchronized long usedBytes() {
        return usedBytes;
    }

    /** @return chunks carved from a slab because none of their size was free. */
    public synchronized long carved() {
        return carved;
    }

    /** @return chunks handed out again after their return. */
    public synchronized long reused() {
        return reused;
    }

    /** @return slabs allocated and not released. */
    public synchronized int slabs() {
        return slabs.size();
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Gives the slabs back to the system. The caller must have {@link LocationIndex#clear()
     * cleared} every index that may still be used: a cleared index touches no memory. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (final ByteBuffer slab : slabs) {
            BufferUtil.free(slab);
        }
        slabs.clear();
        java.util.Arrays.fill(free, 0);
        bump = 0;
        bumpEnd = 0;
        reservedBytes = 0;
        usedBytes = 0;
    }

    @Override
    public synchronized String toString() {
        return "LocationMemory{reservedBytes=" + reservedBytes + ", usedBytes=" + usedBytes + ", slabs=" + slabs.size()
            + ", closed=" + closed + '}';
    }
}
