package io.streamcache.core.cache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

/**
 * The buffers of one tier that have free blocks, last in first out: a lock-free (Treiber) stack
 * any thread may push to and pop from at once.
 *
 * <p><b>Why a stack.</b> The buffer that gained free blocks last is the one whose memory the CPU
 * touched last: its blocks were just written or read by the entries freed from it. Handing it out
 * first keeps a hot working set in the CPU caches. A first-in first-out queue hands out the buffer
 * that has waited longest instead: with a cache much larger than its hot set, every allocation
 * then lands in memory untouched for a whole cycle of the cache, and an insert of 10 KB costs a
 * trip to DRAM for every line it writes (measured in {@code HotBlockCacheBenchmark}'s steady row
 * on a 1 GB cache: 3.1 us per operation with the queue, 0.6 us with this stack under the same
 * load; see {@code docs/benchmarks.md}).
 *
 * <p><b>Layout.</b> The head is one {@code long}: a 32-bit stamp, bumped by every successful
 * push and pop, above the 32-bit position of the top buffer plus one (0: empty). Each buffer's
 * link to the one below it is an {@code int} in {@link #below}, indexed by the buffer's position
 * in the tier.
 * <pre>
 *   head:  | stamp (32 bits)               | top + 1 (32 bits, 0 = empty)  |
 *   below: [ pos 0: below + 1 ][ pos 1: below + 1 ] ...
 * </pre>
 * The stamp makes a pop whose head is stale fail its compare-and-set even if the same buffer is
 * on top again (the ABA case), so the link it read, possibly stale, is never installed. It wraps
 * after 2^32 operations between one thread's read and its compare-and-set, which cannot happen.
 *
 * <p><b>Threading:</b> any number of threads. A buffer is in the stack at most once: the caller
 * pushes only a buffer it took out (by {@link #pop}) or one it marked present under the buffer's
 * lock ({@link CacheBuffer#inQueue}), as {@link BlockAllocator} does. A push writes the link
 * with release semantics before the head's compare-and-set; a pop reads the head (volatile) and
 * then the link (acquire), so it sees the link written before the push it observed.
 */
final class BufferStack {
    private static final VarHandle HEAD;
    private static final VarHandle BELOW = MethodHandles.arrayElementVarHandle(int[].class);
    private static final int POSITION_BITS = Integer.SIZE;
    private static final long POSITION_MASK = (1L << POSITION_BITS) - 1;

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(BufferStack.class, "head", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CacheBuffer[] buffers;
    private final int first;
    private final int[] below;
    @SuppressWarnings("unused") // accessed through HEAD
    private volatile long head;

    /** What {@link #pop} returns when the stack is empty, or null: a tier's next on-demand buffer. */
    private final Supplier<CacheBuffer> whenEmpty;

    /**
     * An empty stack for the buffers {@code [first, first + count)} of {@code buffers}.
     */
    BufferStack(final CacheBuffer[] buffers, final int first, final int count) {
        this(buffers, first, count, null);
    }

    /**
     * @param whenEmpty called by {@link #pop} on an empty stack, its result returned (a buffer
     *                  given memory on demand, {@link Tier#allocateNext()}); null for none.
     */
    BufferStack(final CacheBuffer[] buffers, final int first, final int count, final Supplier<CacheBuffer> whenEmpty) {
        this.buffers = buffers;
        this.first = first;
        this.below = new int[count];
        this.whenEmpty = whenEmpty;
    }

    /**
     * Puts {@code buffer} on top. The caller guarantees it is not in the stack.
     */
    void push(final CacheBuffer buffer) {
        final int id = buffer.index - first + 1;
        while (true) {
            final long h = (long)HEAD.getVolatile(this);
            BELOW.setRelease(below, id - 1, (int)(h & POSITION_MASK));
            if (HEAD.compareAndSet(this, h, next(h, id))) {
                return;
            }
        }
    }

    /**
     * @return the top buffer, taken off the stack; if the stack is empty, the buffer its
     *         {@code whenEmpty} gives (not in the stack), or {@code null}.
     */
    CacheBuffer pop() {
        while (true) {
            final long h = (long)HEAD.getVolatile(this);
            final int top = (int)(h & POSITION_MASK);
            if (top == 0) {
                return whenEmpty == null ? null : whenEmpty.get();
            }
            final int under = (int)BELOW.getAcquire(below, top - 1);
            if (HEAD.compareAndSet(this, h, next(h, under))) {
                return buffers[first + top - 1];
            }
        }
    }

    /** The head after {@code h} with {@code id} (position + 1, or 0) on top and the stamp bumped. */
    private static long next(final long h, final int id) {
        return (((h >>> POSITION_BITS) + 1) << POSITION_BITS) | (id & POSITION_MASK);
    }
}
