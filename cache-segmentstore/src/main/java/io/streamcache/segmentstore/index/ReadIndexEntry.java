package io.streamcache.segmentstore.index;

import io.streamcache.core.layout.BlockAddressDescriptor;

/**
 * One entry of a segment's read index, which is also its own node in the {@link AvlReadIndex}:
 * not thread-safe; the owning segment reads and writes it under its lock, and hands it to
 * another thread only across a happens-before edge.
 *
 * <p>An entry says that the bytes {@code [offset, offset + length)} of the segment are (or were)
 * held by the block-cache entry at {@code address}. The offset is the key and never changes;
 * the length grows in place as appends extend the entry, the address becomes
 * {@link #NULL_ADDRESS} when the cache evicts the bytes (a gap a read reports as "not
 * cached"), and the generation records the last use for the cache manager.
 *
 * <h2>Layout</h2>
 * As laid out by OpenJDK 17 on a 64-bit JVM with compressed oops and compressed class pointers
 * (heaps below 32 GB), printed by JOL 0.17: 48 bytes per entry, 41 of them used. The JVM, not
 * the declaration order, places the fields: it fills the gap after the 12-byte header with an
 * int.
 *
 * <pre>
 *   0               4               8               12              16
 *  +---------------+---------------+---------------+---------------+
 *  |           mark word           |   class ptr   |    length     |
 *  +---------------+---------------+---------------+---------------+
 *  16              20              24              28              32
 *  +---------------+---------------+---------------+---------------+
 *  |         offset (the key)      |    address    |  generation   |
 *  +---+-----------+---------------+---------------+---------------+
 *  32  33          36              40              44              48
 *  +---+-----------+---------------+---------------+---------------+
 *  | h |  (gap)    |     left      |     right     | (alignment)   |
 *  +---+-----------+---------------+---------------+---------------+
 *
 *  offset      first segment byte covered (long, final)
 *  length      bytes covered, &gt;= 0 (int)
 *  address     block-cache address of the entry's last block, unsigned; 0 = not cached
 *  generation  cache-manager generation of the last use (int)
 *  h           AVL height of the subtree rooted here (byte); 0 = not in any tree
 *  left, right AVL children (compressed references), null when absent
 * </pre>
 *
 * Without compressed oops ({@code -XX:-UseCompressedOops}, heaps of 32 GB and more) the two
 * references take 8 bytes each and the entry takes 56 bytes. Measured: inserting 1,000,000
 * entries into one {@link AvlReadIndex} grows the used heap (after repeated
 * {@code System.gc()}) by 48.00 bytes per entry with the serial and parallel collectors, 48.11
 * with G1, and 56.00 without compressed oops; see {@code ReadIndexFootprint} in the tests. The
 * tree adds one 24-byte object per segment and nothing per entry.
 */
public final class ReadIndexEntry {
    /** The address that names no cache entry: the bytes are not cached. */
    public static final int NULL_ADDRESS = BlockAddressDescriptor.NULL_ADDRESS;

    private final long offset;
    private int length;
    private int address;
    private int generation;

    /** Left child in the tree: entries with smaller offsets. */
    ReadIndexEntry left;
    /** Right child in the tree: entries with greater offsets. */
    ReadIndexEntry right;
    /** Height of the subtree rooted here, 1 for a leaf; 0 while the entry is in no tree. */
    byte height;

    /**
     * @param offset     first segment byte covered, &gt;= 0.
     * @param length     bytes covered, &gt;= 0, with {@code offset + length} not overflowing.
     * @param address    block-cache address, or {@link #NULL_ADDRESS}.
     * @param generation generation of the last use.
     * @throws IllegalArgumentException if the offset or length is out of range.
     */
    public ReadIndexEntry(final long offset, final int length, final int address, final int generation) {
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
     * @return the first segment byte this entry covers; the tree's key.
     */
    public long offset() {
        return offset;
    }

    /**
     * @return how many bytes this entry covers.
     */
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
    public int generation() {
        return generation;
    }

    /**
     * @param generation the cache-manager generation of this use.
     */
    public void generation(final int generation) {
        this.generation = generation;
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
