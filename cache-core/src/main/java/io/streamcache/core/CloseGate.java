package io.streamcache.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * A thread-safe gate that lets a {@code close()} wait for the operations in flight before it
 * frees what they use: a
 * {@link io.streamcache.core.cache.BlockCache} frees its memory at close and requires that no
 * operation runs then, which a caller whose own callers do not stop first (Pravega's read index
 * deletes its entries on an executor of its own while a container shuts down; a broker's
 * request threads racing its shutdown) cannot promise. The Pravega adapter and the
 * message-queue facade close through one.
 *
 * <pre>
 *  counts: long[64 slots x 16]: one count per thread slot (thread id mod 64), 128 bytes apart
 *  enter:  getAndAdd(slot, +1) (a full fence); then read closing: set -> undo, refuse
 *  exit:   getAndAdd(slot, -1)
 *  close:  closing = true (volatile); then wait until every slot reads 0
 * </pre>
 * Dekker's pattern: an operation either sees {@code closing} and does nothing, or its count is
 * seen by the close, which waits for it. One locked instruction per enter and per exit, on a
 * line shared only with the threads of the same slot; no lock.
 *
 * <p><b>Threading:</b> thread-safe. An operation enters and exits on the same thread (its slot
 * is its thread's); operations may nest (a full callback that deletes entries inside an insert).
 */
public final class CloseGate {
    private static final int SLOTS = 64;
    /** Longs between two slots: 128 bytes, so two slots never share a cache line (nor its neighbour). */
    private static final int PAD = 16;
    private static final VarHandle COUNT = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] counts = new long[SLOTS * PAD];
    private volatile boolean closing;

    /** An open gate: every {@link #enter()} succeeds until {@link #closeAndAwait}. */
    public CloseGate() {
    }

    /** @return true if the operation may run (call {@link #exit()} after it), false once closing. */
    public boolean enter() {
        final int slot = slot();
        COUNT.getAndAdd(counts, slot, 1L);
        if (closing) {
            COUNT.getAndAdd(counts, slot, -1L);
            return false;
        }
        return true;
    }

    /** Ends an operation {@link #enter()} admitted, on the same thread. */
    public void exit() {
        COUNT.getAndAdd(counts, slot(), -1L);
    }

    /**
     * Refuses new operations and waits until those in flight have exited, at most {@code timeout}
     * nanoseconds.
     *
     * @return whether none is in flight (false: the wait timed out, or the caller itself is
     *         inside an operation, as a full callback that closes the cache would be).
     */
    public boolean closeAndAwait(final long timeoutNanos) {
        closing = true;
        final long deadline = System.nanoTime() + timeoutNanos;
        int spins = 0;
        while (inFlight() != 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            if (++spins < 100) {
                Thread.onSpinWait();
            } else {
                try {
                    TimeUnit.MICROSECONDS.sleep(100);
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return inFlight() == 0;
                }
            }
        }
        return true;
    }

    /** @return whether {@link #closeAndAwait} was called. */
    public boolean isClosing() {
        return closing;
    }

    /** @return the operations in flight now (a sum of volatile reads). */
    public long inFlight() {
        long sum = 0;
        for (int i = 0; i < SLOTS; i++) {
            sum += (long) COUNT.getVolatile(counts, i * PAD);
        }
        return sum;
    }

    private static int slot() {
        return ((int) Thread.currentThread().getId() & (SLOTS - 1)) * PAD;
    }
}
