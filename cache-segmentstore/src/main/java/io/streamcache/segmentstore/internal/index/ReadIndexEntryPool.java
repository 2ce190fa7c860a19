package io.streamcache.segmentstore.internal.index;

import org.jctools.queues.MpmcArrayQueue;

import java.util.concurrent.atomic.LongAdder;

/**
 * A bounded pool of dead {@link ReadIndexEntry} objects, shared by the segments of one store, so
 * that the steady state of a full cache (an entry made for every one that dies) allocates no
 * entry: the append path takes one with {@link #take}, and the paths that remove entries from a
 * tree give them back with {@link #recycle}.
 *
 * <p><b>Threading:</b> thread-safe and lock-free: a jctools {@code MpmcArrayQueue} of free
 * entries (one compare-and-set per call; nothing allocated). Entries are made on one segment's
 * lock and given back under another's (an append on the log's completer thread, an eviction
 * pass on the manager's), so the pool is not per thread; the queue's offer and poll are the
 * happens-before edge between the thread that last used an entry and the one that reuses it.
 * A full pool drops the entry (the garbage collector takes it); an empty one makes a new entry.
 *
 * <h2>Why a recycled entry is safe to reuse</h2>
 * A {@code ReadIndexEntry} is reused for another range, possibly of another segment, so a
 * holder that kept a reference to it past its removal would act on someone else's bytes. Every
 * holder of an entry reference outside its segment's lock, and why none can act on a reused one:
 *
 * <pre>
 *  holder                              how long it holds          why it cannot see a reuse
 *  ----------------------------------  -------------------------  ---------------------------------------
 *  a read result's pinned entries      until its last release     a pinned entry is never recycled (1)
 *  (ReadResult, its views)             unpins them
 *  a promotion request (Promotions)    until drained              re-validated under the lock (2)
 *  Segment.writing, the append's       inside one locked call     only removed entries are recycled;
 *  and fill's locals                                              these stay in the tree for the call (3)
 *  eviction scans (EvictionPasses,     inside one locked call     the scan goes on from the survivor
 *  OneTierPass, TierResizing), the     (they keep segments and    of a coalescing; the callbacks keep
 *  policies (CachedEntry)              offsets, never entries)    no reference
 *  WarmCheckpointer                    inside one locked call     copies offset, length, address
 * </pre>
 *
 * (1) Only an entry that is retired with no pin is recycled ({@link #recycle} checks the pin
 * word is exactly the retired bit): eviction skips pinned entries, so a placeholder is never
 * pinned; a truncation or deletion that retires a pinned entry leaves it to the reader whose
 * last unpin frees its cache entry, and it is not recycled at all. A reader's unpin that does
 * not take the count of a retired entry to zero touches the entry no more.
 * (2) A queued promotion records the entry's offset with it; the promotion, under the
 * segment's lock, acts only if the segment's tree still holds that very entry at that offset
 * ({@code index.get(offset) == entry}). That walk reads only the segment's own nodes, under its
 * lock, so it is exact even if the entry now sits in another segment's tree; if the entry was
 * reused in the same segment at the same offset, it is that segment's entry for those bytes,
 * and promoting it is what a fresh request would do.
 * (3) An entry is recycled by the thread that removes it from its tree, under the segment's
 * lock, after its last use there (coalescing, truncation, deletion, a fill's split, an append's
 * roll-back); a cache call that runs an eviction pass on the same thread (a full cache,
 * reentrant lock) may coalesce and recycle placeholders of the segment, but the append grows
 * only cached, not yet durable entries (never evicted) and the fill looks its placeholder up
 * again after the cache call.
 *
 * <p>As a second line, {@link #recycle} poisons the entry (no address, no length) and keeps its
 * retired bit until {@link #take} resets it, so a holder the argument above missed reads an
 * empty, retired entry rather than another segment's bytes until the entry is reused.
 *
 * <h2>Counters</h2>
 * Four counters say how well the pool serves: {@link #taken} (entries reused from the pool),
 * {@link #made} (new entries because it was empty), {@link #recycled} (entries given back and
 * kept) and {@link #dropped} (given back but left to the garbage collector, the pool being full).
 * The two common ones cost nothing: they are the queue's own consumer and producer indexes,
 * which every successful poll and offer advances by one anyway. The two others are
 * {@link LongAdder}s, added to only on the paths that allocate (a new entry) or make garbage (a
 * dropped one): no shared counter is written on the steady path.
 *
 * <pre>
 *   take()    poll ok ----------------------> taken    = queue's consumer index
 *             poll empty -> new entry ------> made     (LongAdder)
 *   recycle() offer ok ---------------------> recycled = queue's producer index
 *             offer full -> garbage --------> dropped  (LongAdder)
 *
 *   pooled now = recycled - taken (exact when no call is running)
 * </pre>
 *
 * A take whose reset throws on bad input puts its entry back: it counts as taken and recycled
 * (or dropped). An offer can also find its slot not yet freed by a racing take and count as
 * dropped with the pool one short of full.
 *
 * <p><b>Memory:</b> at most {@code capacity} entries of 48 bytes on the heap (with compressed
 * oops) plus the queue's arrays; none of it counts against the cache's bound, which is off the heap.
 */
public final class ReadIndexEntryPool {
    private final MpmcArrayQueue<ReadIndexEntry> free;
    /** Entries {@link #take} made because the pool was empty. */
    private final LongAdder made = new LongAdder();
    /** Entries {@link #recycle} left to the garbage collector because the pool was full. */
    private final LongAdder dropped = new LongAdder();

    /**
     * @param capacity how many dead entries the pool keeps, at least 2 (rounded up to a power of two).
     * @throws IllegalArgumentException if {@code capacity < 2}.
     */
    public ReadIndexEntryPool(final int capacity) {
        if (capacity < 2) {
            throw new IllegalArgumentException("capacity=" + capacity + " must be >= 2");
        }
        this.free = new MpmcArrayQueue<>(capacity);
    }

    /**
     * An entry as {@code new ReadIndexEntry(offset, length, address, generation)} makes it: a pooled
     * one if there is one, else a new one. Any thread; allocates only when the pool is empty.
     *
     * @throws IllegalArgumentException if the offset or length is out of range (as the constructor).
     */
    public ReadIndexEntry take(final long offset, final int length, final int address, final int generation) {
        final ReadIndexEntry entry = free.relaxedPoll();
        if (entry == null) {
            final ReadIndexEntry made = new ReadIndexEntry(offset, length, address, generation);
            this.made.increment();
            return made;
        }
        try {
            entry.reset(offset, length, address, generation);
        } catch (final IllegalArgumentException e) {
            // Still poisoned and retired: back into the pool (counted as taken and recycled).
            if (!free.relaxedOffer(entry)) {
                dropped.increment();
            }
            throw e;
        }
        return entry;
    }

    /**
     * Gives back an entry that left its tree for good: retired, with no pin, in no tree, and no
     * longer referenced by its segment (see the class comment). Call it on the thread that
     * removed and retired it, after its last use. Allocates nothing.
     *
     * @return whether the pool kept it (false: full, left to the garbage collector).
     * @throws IllegalStateException if the entry is still in a tree, not retired, or pinned; the
     *                               entry is then not pooled.
     */
    public boolean recycle(final ReadIndexEntry entry) {
        if (entry.isLinked() || entry.pinWord() != ReadIndexEntry.RETIRED_BIT) {
            throw new IllegalStateException("not recyclable (must be retired, unpinned, in no tree): " + entry
                + " linked=" + entry.isLinked() + " pinWord=0x" + Integer.toHexString(entry.pinWord()));
        }
        entry.poison();
        if (free.relaxedOffer(entry)) {
            return true;
        }
        dropped.increment();
        return false;
    }

    /** @return entries taken from the pool (reused) since it was made. Any thread. */
    public long taken() {
        return free.currentConsumerIndex();
    }

    /** @return entries {@link #take} made new because the pool was empty. Any thread. */
    public long made() {
        return made.sum();
    }

    /** @return entries given back and kept by the pool. Any thread. */
    public long recycled() {
        return free.currentProducerIndex();
    }

    /** @return entries given back but dropped because the pool was full. Any thread. */
    public long dropped() {
        return dropped.sum();
    }

    /** @return entries in the pool now (approximate while other threads use it). */
    public int size() {
        return free.size();
    }

    /** @return how many entries the pool keeps at most. */
    public int capacity() {
        return free.capacity();
    }
}
