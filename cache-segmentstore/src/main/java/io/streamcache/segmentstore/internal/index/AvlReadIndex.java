package io.streamcache.segmentstore.internal.index;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * A segment's read index as an AVL tree keyed by segment offset whose nodes are the
 * {@link ReadIndexEntry} objects themselves: not thread-safe; the owning segment serializes
 * every call (reads included) under its lock.
 *
 * <p>A read finds the entry containing its offset with {@link #floorContaining(long)} and walks
 * forward with {@link #next(ReadIndexEntry)}; an append grows {@link #last()} in place and
 * inserts a new entry at the right when that one is full; truncation drops a prefix with
 * {@link #removeBefore(long, Consumer)}. The tree orders entries by offset only: it never reads
 * lengths, so the owner keeps entries from overlapping (with overlaps, containment and
 * truncation answers are as documented per method, not "every entry that matches").
 *
 * <pre>
 *  tree (each node is an entry; h = stored subtree height):
 *
 *                          +--------------+
 *                          | 40 +24  h=3  |  root
 *                          +--------------+
 *                         /                \
 *            +--------------+            +--------------+
 *            | 16 +12  h=2  |            | 64 +16  h=2  |
 *            +--------------+            +--------------+
 *            /            \                            \
 *   +--------------+ +--------------+            +--------------+
 *   |  0 +16  h=1  | | 28 +12  h=1  |            | 80 +16  h=1  |  last(): appends grow it,
 *   +--------------+ +--------------+            +--------------+  new entries go right of it
 *
 *  segment offsets covered:
 *
 *   0         16       28       40                64         80          96
 *   |---------|--------|--------|-----------------|##########|-----------|
 *                                                  address 0: evicted,
 *                                                  a read there is "not cached"
 * </pre>
 *
 * <h2>Balance</h2>
 * Every node stores the height of its subtree; the heights of a node's two subtrees differ by
 * at most one, so a tree of {@code n} entries is less than {@code 1.4405 log2(n + 2)} high
 * (45 levels for 2^31 entries): lookups and updates are O(log n) whatever the order of inserts,
 * including the streaming case where every insert lands at the right edge.
 *
 * <h2>Garbage and memory</h2>
 * Lookups ({@link #get}, {@link #floor}, {@link #ceiling}, {@link #higher}, {@link #lower},
 * {@link #floorContaining}, {@link #next}, {@link #first}, {@link #last}) walk down from the root
 * and allocate nothing. Inserts link the caller's entry and allocate nothing else; removes
 * allocate nothing. Updates recurse along one root-to-leaf path (at most 45 frames). The heap
 * cost is the entries' own: 48 bytes each with compressed oops (see {@link ReadIndexEntry}),
 * plus the root: a segment keeps only the root in a field of its own and calls the same
 * algorithms as static methods of {@link ReadIndexTree} (no tree object per segment); this
 * class is the tree as an object of its own (24 bytes: the root and a size), for tests,
 * benchmarks and the simulator. Entries have no parent link, so {@link #next} searches from
 * the root: O(log n) per step.
 *
 * <p>An entry belongs to at most one tree at a time: inserting a linked entry is rejected, and
 * removing an entry (by {@link #remove}, {@link #removeFirst}, {@link #removeBefore} or
 * {@link #clear}) unlinks it so it may be inserted again.
 */
public final class AvlReadIndex {
    /** See {@link ReadIndexTree#MAX_HEIGHT}. */
    static final int MAX_HEIGHT = ReadIndexTree.MAX_HEIGHT;

    private ReadIndexEntry root;
    private int size;

    /**
     * @return how many entries the tree holds.
     */
    public int size() {
        return size;
    }

    /**
     * @return whether the tree holds no entry.
     */
    public boolean isEmpty() {
        return root == null;
    }

    /**
     * @return the number of levels: 0 when empty, 1 for a single entry.
     */
    public int height() {
        return ReadIndexTree.height(root);
    }

    /**
     * Links {@code entry} into the tree. Allocates nothing.
     *
     * @param entry an entry in no tree, whose offset is not yet a key of this tree.
     * @throws IllegalArgumentException if the offset is already a key, or the entry is already
     *                                  linked into a tree; the tree is then unchanged.
     * @throws IllegalStateException    if the tree already holds {@link Integer#MAX_VALUE} entries.
     * @throws NullPointerException     if {@code entry} is null.
     */
    public void insert(final ReadIndexEntry entry) {
        if (size == Integer.MAX_VALUE) {
            Objects.requireNonNull(entry, "entry");
            throw new IllegalStateException("tree full: size=" + size);
        }
        root = ReadIndexTree.insert(root, entry);
        size++;
    }

    /**
     * Unlinks the entry keyed {@code offset}. Allocates nothing.
     *
     * @return the removed entry, now in no tree, or null if no entry has that offset.
     */
    public ReadIndexEntry remove(final long offset) {
        final ReadIndexEntry found = get(offset);
        if (found == null) {
            return null;
        }
        root = ReadIndexTree.remove(root, found);
        size--;
        return found;
    }

    /**
     * Unlinks the entry with the smallest offset. Allocates nothing.
     *
     * @return the removed entry, now in no tree, or null if the tree is empty.
     */
    public ReadIndexEntry removeFirst() {
        final ReadIndexEntry first = first();
        if (first == null) {
            return null;
        }
        root = ReadIndexTree.removeMin(root);
        first.unlink();
        size--;
        return first;
    }

    /**
     * Truncation: removes entries from the first onward while they end at or before
     * {@code offset}. With non-overlapping entries these are exactly the entries whose
     * {@code endOffset() <= offset}; an entry that straddles {@code offset} stays.
     * Costs O(k log n) for k removed entries; allocates nothing.
     *
     * @param offset  the new start of the segment.
     * @param removed called with each removed entry, already unlinked, in offset order (to free
     *                its cache entry); may be null. It must not call into this tree.
     * @return how many entries were removed.
     */
    public int removeBefore(final long offset, final Consumer<? super ReadIndexEntry> removed) {
        int count = 0;
        ReadIndexEntry first = first();
        while (first != null && first.endOffset() <= offset) {
            root = ReadIndexTree.removeMin(root);
            first.unlink();
            size--;
            count++;
            if (removed != null) {
                removed.accept(first);
            }
            first = first();
        }
        return count;
    }

    /**
     * Same as {@link #removeBefore(long, Consumer)} with no callback.
     *
     * @return how many entries were removed.
     */
    public int removeBefore(final long offset) {
        return removeBefore(offset, null);
    }

    /**
     * Removes every entry, unlinking each so it may be inserted again. Free the entries' cache
     * entries first, with {@link #forEach(Consumer)}. O(n).
     */
    public void clear() {
        ReadIndexTree.clear(root);
        root = null;
        size = 0;
    }

    /**
     * @return the entry keyed exactly {@code offset}, or null.
     */
    public ReadIndexEntry get(final long offset) {
        return ReadIndexTree.get(root, offset);
    }

    /**
     * @return the entry with the greatest offset {@code <= offset}, or null.
     */
    public ReadIndexEntry floor(final long offset) {
        return ReadIndexTree.floor(root, offset);
    }

    /**
     * @return the entry with the least offset {@code >= offset}, or null.
     */
    public ReadIndexEntry ceiling(final long offset) {
        return ReadIndexTree.ceiling(root, offset);
    }

    /**
     * @return the entry with the least offset {@code > offset}, or null.
     */
    public ReadIndexEntry higher(final long offset) {
        return ReadIndexTree.higher(root, offset);
    }

    /**
     * @return the entry with the greatest offset {@code < offset}, or null.
     */
    public ReadIndexEntry lower(final long offset) {
        return ReadIndexTree.lower(root, offset);
    }

    /**
     * The read path's lookup: the floor entry, if it covers {@code offset}. With
     * non-overlapping entries this is the only entry that can contain it.
     *
     * @return the entry with the greatest offset {@code <= offset} if
     *         {@code offset < entry.endOffset()}, else null (a gap, or past the end).
     */
    public ReadIndexEntry floorContaining(final long offset) {
        return ReadIndexTree.floorContaining(root, offset);
    }

    /**
     * Walks forward: the entry after {@code entry} in offset order. Searches from the root
     * (entries carry no parent link).
     *
     * @param entry an entry of this tree (or any entry: the answer is {@code higher(entry.offset())}).
     * @return the entry with the least offset {@code > entry.offset()}, or null.
     */
    public ReadIndexEntry next(final ReadIndexEntry entry) {
        return ReadIndexTree.next(root, entry);
    }

    /**
     * @return the entry with the smallest offset, or null if empty.
     */
    public ReadIndexEntry first() {
        return ReadIndexTree.first(root);
    }

    /**
     * @return the entry with the greatest offset (the one appends grow), or null if empty.
     */
    public ReadIndexEntry last() {
        return ReadIndexTree.last(root);
    }

    /**
     * Calls {@code action} with every entry in ascending offset order. The action may change an
     * entry's length, address and generation, but must not insert or remove.
     */
    public void forEach(final Consumer<? super ReadIndexEntry> action) {
        ReadIndexTree.forEach(root, action);
    }

    /**
     * Verifies the structure, for tests and debugging: keys strictly ascending in order, stored
     * heights equal to the computed ones, every balance in [-1, 1], and the entry count equal to
     * {@link #size()}. O(n); allocates a little.
     *
     * @throws IllegalStateException naming the first violation found and the offset it was found at.
     */
    public void checkInvariants() {
        final long count = ReadIndexTree.checkInvariants(root);
        if (count != size) {
            throw new IllegalStateException("size=" + size + " but the tree links count=" + count + " entries");
        }
    }

    @Override
    public String toString() {
        final ReadIndexEntry first = first();
        final ReadIndexEntry last = last();
        return "AvlReadIndex{size=" + size
            + ", height=" + height()
            + ", firstOffset=" + (first == null ? "none" : Long.toString(first.offset()))
            + ", lastEndOffset=" + (last == null ? "none" : Long.toString(last.endOffset())) + '}';
    }
}
