package io.streamcache.segmentstore.internal.index;

import io.streamcache.segmentstore.eviction.CachedEntry;

import io.streamcache.core.cache.BlockCache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One entry of a segment's read index, which is also its own node in the {@link AvlReadIndex}:
 * not thread-safe, except for the pin word; the owning segment reads and writes every other
 * field under its lock, and hands the entry to another thread only across a happens-before edge.
 *
 * <p>An entry says that the bytes {@code [offset, offset + length)} of the segment are (or were)
 * held by the block-cache entry at {@code address}. The offset is the key and never changes
 * while the entry is in a tree (only {@link ReadIndexEntryPool} sets it again, on an entry that
 * left its tree for good: see there); the length grows in place as appends extend the entry, the address becomes
 * {@link #NULL_ADDRESS} when the cache evicts the bytes (a gap a read reports as "not
 * cached"), and the generation records the last use for the cache manager. An entry that is not
 * cached is a <em>placeholder</em>: the segment coalesces adjacent placeholders by growing the
 * earlier one in place (under its lock, like every length change) and removing the later one,
 * so a placeholder may be longer than the segment's maximum entry length; it is never pinned.
 *
 * <h2>Pins</h2>
 * A reader holding zero-copy views of the entry's cache blocks pins it; eviction skips pinned
 * entries, and an entry removed from its index while pinned (truncation, deletion) is
 * <em>retired</em>: its cache entry is freed by whoever drops the last pin. Pins are taken under
 * the segment's lock but dropped from any thread, so the pin word alone is atomic:
 *
 * <pre>
 *    3                   2                   1                   0
 *  1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0
 * +-+-------------------------------------------------------------+
 * |R|                        pin count                            |
 * +-+-------------------------------------------------------------+
 *
 *  R          retired: removed from its index; the last unpin frees the cache entry
 *  pin count  readers holding views of the entry, PIN_COUNT_BITS = 31 bits
 * </pre>
 *
 * Exactly one thread frees a retired entry: {@link #retire()} returns {@code true} if no pin was
 * held, otherwise the {@link #unpin()} that takes the count to zero returns {@code true}.
 *
 * <h2>Layout</h2>
 * As laid out by OpenJDK 17 on a 64-bit JVM with compressed oops and compressed class pointers
 * (heaps below 32 GB), printed by JOL 0.17: 48 bytes per entry, 47 of them used (the two
 * tier bytes fill the gap after the height byte: see the measurement below). The JVM, not
 * the declaration order, places the fields: it fills the gap after the 12-byte header with an
 * int, then places the long, the other ints, the byte and last the references.
 *
 * <pre>
 *   0               4               8               12              16
 *  +---------------+---------------+---------------+---------------+
 *  |           mark word           |   class ptr   |    length     |
 *  +---------------+---------------+---------------+---------------+
 *  16              20              24              28              32
 *  +---------------+---------------+---------------+---------------+
 *  |         offset (the key)      |    address    |  generation   |
 *  +---------------+---+-----------+---------------+---------------+
 *  32              36  37          40              44              48
 *  +---------------+---+-----------+---------------+---------------+
 *  |   pin word    | h | r | t |gap|     left      |     right     |
 *  +---------------+---+---+---+---+---------------+---------------+
 *
 *  offset      first segment byte covered (long; set again only when the pool reuses the entry)
 *  length      bytes covered, &gt;= 0 (int; a coalesced placeholder may reach Integer.MAX_VALUE)
 *  address     block-cache address of the entry's last block, unsigned; 0 = not cached
 *  generation  cache-manager generation of the last use (int)
 *  pin word    retired bit and pin count (int, atomic: see above)
 *  h           AVL height of the subtree rooted here (byte); 0 = not in any tree
 *  r, t        reads while in a slower tier, and the promotion tick of the last promotion
 *              request (bytes, for tiered caches: see CacheManager)
 *  left, right AVL children (compressed references), null when absent
 * </pre>
 *
 * Without compressed oops ({@code -XX:-UseCompressedOops}, heaps of 32 GB and more) the two
 * references take 8 bytes each, at 40 and 48: 56 bytes per entry (JOL 0.17, compressed class
 * pointers still on). The pin word fills space that alignment wasted before it was added, so
 * it costs no heap. Measured: inserting 1,000,000 entries into one {@link AvlReadIndex} grows
 * the used heap (after repeated {@code System.gc()}) by 48.00 bytes per entry with the serial
 * and parallel collectors, 48.1 with G1, and 56.00 without compressed oops; see
 * {@code ReadIndexFootprint} in the tests. The tree adds nothing per entry, and per segment only
 * the root reference the segment keeps ({@link ReadIndexTree}; {@link AvlReadIndex}, the tree as
 * an object of its own, is 24 bytes more).
 *
 * <h2>Reuse</h2>
 * An entry removed from its tree, retired with no pin, may go back to the store's
 * {@link ReadIndexEntryPool} and come out again for other bytes, possibly of another segment:
 * {@link #reset} gives it a new offset and clears the rest. The pool's class comment says why no
 * holder can act on a reused entry as the old one.
 */
public final class ReadIndexEntry implements CachedEntry {
    /** The address that names no cache entry: the bytes are not cached. */
    public static final int NULL_ADDRESS = BlockCache.NULL_ADDRESS;
    /** Bits of the pin word that count pins. */
    public static final int PIN_COUNT_BITS = 31;
    /** Mask of the pin count in the pin word. */
    public static final int PIN_COUNT_MASK = (1 << PIN_COUNT_BITS) - 1;
    /** Position of the retired bit in the pin word. */
    public static final int RETIRED_SHIFT = PIN_COUNT_BITS;
    /** The retired bit of the pin word. */
    public static final int RETIRED_BIT = 1 << RETIRED_SHIFT;

    private static final VarHandle PIN_WORD;

    static {
        try {
            PIN_WORD = MethodHandles.lookup().findVarHandle(ReadIndexEntry.class, "pinWord", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private long offset;
    private int length;
    private int address;
    private int generation;
    /** Retired bit and pin count; only through {@link #PIN_WORD}'s atomic access modes. */
    @SuppressWarnings("unused")
    private volatile int pinWord;

    /** Left child in the tree: entries with smaller offsets. */
    ReadIndexEntry left;
    /** Right child in the tree: entries with greater offsets. */
    ReadIndexEntry right;
    /** Height of the subtree rooted here, 1 for a leaf; 0 while the entry is in no tree. */
    byte height;
    /** Reads since the entry last moved between tiers, while in a slower tier (saturating at 127); guarded by the segment lock. */
    private byte tierReads;
    /** Low byte of the cache manager's promotion tick when the entry was last queued for promotion; guarded by the segment lock. */
    private byte promotionTick;

    /**
     * @param offset     first segment byte covered, &gt;= 0.
     * @param length     bytes covered, &gt;= 0, with {@code offset + length} not overflowing.
     * @param address    block-cache address, or {@link #NULL_ADDRESS}.
     * @param generation generation of the last use.
     * @throws IllegalArgumentException if the offset or length is out of range.
     */
    public ReadIndexEntry(final long offset, final int length, final int address, final int generation) {
        assign(offset, length, address, generation);
    }

    /**
     * Makes a dead entry (see {@link ReadIndexEntryPool}) new again: the state of
     * {@code new ReadIndexEntry(offset, length, address, generation)}, no pin, not retired, no
     * tier reads or promotion tick, in no tree. The final volatile write of the pin word
     * publishes the other fields with it.
     *
     * @throws IllegalArgumentException as the constructor; the entry is then unchanged.
     */
    void reset(final long offset, final int length, final int address, final int generation) {
        assign(offset, length, address, generation);
        this.tierReads = 0;
        this.promotionTick = 0;
        this.left = null;
        this.right = null;
        this.height = 0;
        PIN_WORD.setVolatile(this, 0);
    }

    /** The constructor's and {@link #reset}'s checks and key fields: nothing changed if a check fails. */
    private void assign(final long offset, final int length, final int address, final int generation) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset=" + offset + " must be >= 0");
        }
        checkLength(offset, length);
        this.offset = offset;
        this.length = length;
        this.address = address;
        this.generation = generation;
    }

    /**
     * Clears what a stale holder could act on, for an entry going into the pool: no cache
     * address, no length. The pin word keeps its retired bit until {@link #reset}.
     */
    void poison() {
        this.address = NULL_ADDRESS;
        this.length = 0;
    }

    /**
     * @return the raw pin word (a volatile read): the retired bit and the pin count.
     */
    int pinWord() {
        return (int) PIN_WORD.getVolatile(this);
    }

    /**
     * @return the first segment byte this entry covers; the tree's key.
     */
    @Override
    public long offset() {
        return offset;
    }

    /**
     * @return how many bytes this entry covers.
     */
    @Override
    public int length() {
        return length;
    }

    /**
     * Sets the length, typically to grow the entry after an append into its cache entry. The
     * tree does not look at lengths, so changing one never needs a re-insert; keeping entries
     * from overlapping is the owner's business.
     *
     * @param length bytes covered, &gt;= 0, with {@code offset() + length} not overflowing.
     * @throws IllegalArgumentException if the length is out of range.
     */
    public void length(final int length) {
        checkLength(offset, length);
        this.length = length;
    }

    /**
     * @return one past the last segment byte this entry covers: {@code offset() + length()}.
     */
    @Override
    public long endOffset() {
        return offset + length;
    }

    /**
     * @return whether {@code segmentOffset} lies in {@code [offset(), endOffset())}.
     */
    public boolean contains(final long segmentOffset) {
        return segmentOffset >= offset && segmentOffset - offset < length;
    }

    /**
     * @return the block-cache address of the bytes (unsigned), or {@link #NULL_ADDRESS}.
     */
    public int address() {
        return address;
    }

    /**
     * @param address the block-cache address now holding the bytes, or {@link #NULL_ADDRESS}
     *                once they are evicted.
     */
    public void address(final int address) {
        this.address = address;
    }

    /**
     * @return whether the bytes are in the cache: {@code address() != NULL_ADDRESS}.
     */
    public boolean isCached() {
        return address != NULL_ADDRESS;
    }

    /**
     * @return the cache-manager generation of the last use.
     */
    @Override
    public int generation() {
        return generation;
    }

    /**
     * @param generation the cache-manager generation of this use.
     */
    @Override
    public void generation(final int generation) {
        this.generation = generation;
    }

    /**
     * Counts a read of the entry while its bytes are in a slower tier of a tiered cache: the
     * cache manager promotes an entry read often enough. Saturates at {@link Byte#MAX_VALUE}.
     * Call under the owning segment's lock.
     *
     * @return the count after this read.
     */
    public int countTierRead() {
        if (tierReads != Byte.MAX_VALUE) {
            tierReads++;
        }
        return tierReads;
    }

    /**
     * @return reads counted by {@link #countTierRead()} since the last {@link #resetTierReads()}.
     */
    public int tierReads() {
        return tierReads;
    }

    /**
     * Forgets the reads counted in a slower tier: called when the entry moves between tiers.
     * Call under the owning segment's lock.
     */
    public void resetTierReads() {
        tierReads = 0;
    }

    /**
     * @return the low 8 bits of the cache manager's promotion tick when the entry was last queued
     *         for promotion (0 if never).
     */
    public int promotionTick() {
        return promotionTick & 0xFF;
    }

    /**
     * @param tick the cache manager's promotion tick now; its low 8 bits are kept.
     */
    public void promotionTick(final int tick) {
        promotionTick = (byte) tick;
    }

    /**
     * Adds a reader's pin: the entry's cache blocks are not freed until it is dropped. Call
     * under the owning segment's lock, on an entry of the index (not retired). A volatile
     * read-modify-write; pairs with the one in {@link #unpin()} and {@link #retire()}.
     *
     * @throws IllegalStateException if the entry is retired or already holds
     *                               {@link #PIN_COUNT_MASK} pins; the pin word is then unchanged.
     */
    public void pin() {
        int word;
        do {
            word = (int) PIN_WORD.getVolatile(this);
            if ((word & RETIRED_BIT) != 0 || (word & PIN_COUNT_MASK) == PIN_COUNT_MASK) {
                throw new IllegalStateException("cannot pin: offset=" + offset + " retired=" + ((word & RETIRED_BIT) != 0)
                    + " pins=" + (word & PIN_COUNT_MASK));
            }
        } while (!PIN_WORD.compareAndSet(this, word, word + 1));
    }

    /**
     * Drops a reader's pin; callable from any thread. A volatile compare-and-set; pairs with
     * {@link #pin()} and {@link #retire()}.
     *
     * @return {@code true} if this dropped the last pin of a retired entry: the caller must now
     *         free the entry's cache entry (if {@link #isCached()}); nobody else will.
     * @throws IllegalStateException if the entry holds no pin; the pin word is then unchanged.
     */
    public boolean unpin() {
        int word;
        do {
            word = (int) PIN_WORD.getVolatile(this);
            if ((word & PIN_COUNT_MASK) == 0) {
                throw new IllegalStateException("not pinned: offset=" + offset);
            }
        } while (!PIN_WORD.compareAndSet(this, word, word - 1));
        return word - 1 == RETIRED_BIT;
    }

    /**
     * Marks the entry removed from its index (truncated or deleted). Call under the owning
     * segment's lock, once, after removing it. A volatile read-modify-write: the address and
     * length written before it are visible to the thread whose {@link #unpin()} returns
     * {@code true}.
     *
     * @return {@code true} if no pin is held: the caller must free the cache entry now;
     *         {@code false} if the last {@link #unpin()} will.
     * @throws IllegalStateException if the entry is already retired.
     */
    public boolean retire() {
        final int previous = (int) PIN_WORD.getAndBitwiseOr(this, RETIRED_BIT);
        if ((previous & RETIRED_BIT) != 0) {
            throw new IllegalStateException("already retired: offset=" + offset);
        }
        return previous == 0;
    }

    /**
     * @return how many pins are held now (a volatile read).
     */
    public int pinCount() {
        return (int) PIN_WORD.getVolatile(this) & PIN_COUNT_MASK;
    }

    /**
     * @return whether a reader holds a pin now (a volatile read).
     */
    public boolean isPinned() {
        return pinCount() != 0;
    }

    /**
     * @return whether the entry was removed from its index (a volatile read).
     */
    public boolean isRetired() {
        return ((int) PIN_WORD.getVolatile(this) & RETIRED_BIT) != 0;
    }

    /**
     * @return whether this entry is currently a node of some tree.
     */
    boolean isLinked() {
        return height != 0;
    }

    /** Detaches this entry from its tree's links so that it can be inserted again. */
    void unlink() {
        left = null;
        right = null;
        height = 0;
    }

    @Override
    public String toString() {
        return "ReadIndexEntry{offset=" + offset
            + ", length=" + length
            + ", address=0x" + Integer.toHexString(address)
            + ", generation=" + generation + '}';
    }

    private static void checkLength(final long offset, final int length) {
        if (length < 0 || length > Long.MAX_VALUE - offset) {
            throw new IllegalArgumentException("length=" + length + " must be >= 0 and end at most Long.MAX_VALUE, offset=" + offset);
        }
    }
}
