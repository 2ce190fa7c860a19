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
 * plus this object per segment. Entries have no parent link, so {@link #next} searches from
 * the root: O(log n) per step.
 *
 * <p>An entry belongs to at most one tree at a time: inserting a linked entry is rejected, and
 * removing an entry (by {@link #remove}, {@link #removeFirst}, {@link #removeBefore} or
 * {@link #clear}) unlinks it so it may be inserted again.
 */
public final class AvlReadIndex {
    /**
     * Greatest height an AVL tree of at most {@link Integer#MAX_VALUE} entries can reach
     * ({@code 1.4405 log2(2^31 + 1) - 0.3277 < 45}); {@link #checkInvariants()} rejects taller
     * paths, which also stops it on a cycle.
     */
    static final int MAX_HEIGHT = 45;

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
        return height(root);
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
        if (Objects.requireNonNull(entry, "entry").isLinked()) {
            throw new IllegalArgumentException("entry already in a tree: offset=" + entry.offset());
        }
        if (size == Integer.MAX_VALUE) {
            throw new IllegalStateException("tree full: size=" + size);
        }
        // A duplicate throws on the way down, before any link or height changes.
        root = insert(root, entry);
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
        root = remove(root, offset);
        found.unlink();
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
        root = removeMin(root);
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
            root = removeMin(root);
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
        unlinkAll(root);
        root = null;
        size = 0;
    }

    /**
     * @return the entry keyed exactly {@code offset}, or null.
     */
    public ReadIndexEntry get(final long offset) {
        ReadIndexEntry node = root;
        while (node != null) {
            final long key = node.offset();
            if (offset < key) {
                node = node.left;
            } else if (offset > key) {
                node = node.right;
            } else {
                return node;
            }
        }
        return null;
    }

    /**
     * @return the entry with the greatest offset {@code <= offset}, or null.
     */
    public ReadIndexEntry floor(final long offset) {
        ReadIndexEntry node = root;
        ReadIndexEntry best = null;
        while (node != null) {
            final long key = node.offset();
            if (offset < key) {
                node = node.left;
            } else if (offset > key) {
                best = node;
                node = node.right;
            } else {
                return node;
            }
        }
        return best;
    }

    /**
     * @return the entry with the least offset {@code >= offset}, or null.
     */
    public ReadIndexEntry ceiling(final long offset) {
        ReadIndexEntry node = root;
        ReadIndexEntry best = null;
        while (node != null) {
            final long key = node.offset();
            if (offset < key) {
                best = node;
                node = node.left;
            } else if (offset > key) {
                node = node.right;
            } else {
                return node;
            }
        }
        return best;
    }

    /**
     * @return the entry with the least offset {@code > offset}, or null.
     */
    public ReadIndexEntry higher(final long offset) {
        ReadIndexEntry node = root;
        ReadIndexEntry best = null;
        while (node != null) {
            if (offset < node.offset()) {
                best = node;
                node = node.left;
            } else {
                node = node.right;
            }
        }
        return best;
    }

    /**
     * @return the entry with the greatest offset {@code < offset}, or null.
     */
    public ReadIndexEntry lower(final long offset) {
        ReadIndexEntry node = root;
        ReadIndexEntry best = null;
        while (node != null) {
            if (offset > node.offset()) {
                best = node;
                node = node.right;
            } else {
                node = node.left;
            }
        }
        return best;
    }

    /**
     * The read path's lookup: the floor entry, if it covers {@code offset}. With
     * non-overlapping entries this is the only entry that can contain it.
     *
     * @return the entry with the greatest offset {@code <= offset} if
     *         {@code offset < entry.endOffset()}, else null (a gap, or past the end).
     */
    public ReadIndexEntry floorContaining(final long offset) {
        final ReadIndexEntry floor = floor(offset);
        return floor != null && offset - floor.offset() < floor.length() ? floor : null;
    }

    /**
     * Walks forward: the entry after {@code entry} in offset order. Searches from the root
     * (entries carry no parent link).
     *
     * @param entry an entry of this tree (or any entry: the answer is {@code higher(entry.offset())}).
     * @return the entry with the least offset {@code > entry.offset()}, or null.
     */
    public ReadIndexEntry next(final ReadIndexEntry entry) {
        return higher(entry.offset());
    }

    /**
     * @return the entry with the smallest offset, or null if empty.
     */
    public ReadIndexEntry first() {
        ReadIndexEntry node = root;
        if (node == null) {
            return null;
        }
        while (node.left != null) {
            node = node.left;
        }
        return node;
    }

    /**
     * @return the entry with the greatest offset (the one appends grow), or null if empty.
     */
    public ReadIndexEntry last() {
        ReadIndexEntry node = root;
        if (node == null) {
            return null;
        }
        while (node.right != null) {
            node = node.right;
        }
        return node;
    }

    /**
     * Calls {@code action} with every entry in ascending offset order. The action may change an
     * entry's length, address and generation, but must not insert or remove.
     */
    public void forEach(final Consumer<? super ReadIndexEntry> action) {
        forEach(root, action);
    }

    /**
     * Verifies the structure, for tests and debugging: keys strictly ascending in order, stored
     * heights equal to the computed ones, every balance in [-1, 1], and the entry count equal to
     * {@link #size()}. O(n); allocates a little.
     *
     * @throws IllegalStateException naming the first violation found and the offset it was found at.
     */
    public void checkInvariants() {
        final InvariantChecker checker = new InvariantChecker();
        checker.check(root, 1);
        if (checker.count != size) {
            throw new IllegalStateException("size=" + size + " but the tree links count=" + checker.count + " entries");
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

    // ---------------------------------------------------------------------------------------
    // AVL machinery: each update returns the new root of the subtree it was given.

    private static ReadIndexEntry insert(final ReadIndexEntry node, final ReadIndexEntry entry) {
        if (node == null) {
            entry.height = 1;
            return entry;
        }
        final long key = entry.offset();
        if (key < node.offset()) {
            node.left = insert(node.left, entry);
        } else if (key > node.offset()) {
            node.right = insert(node.right, entry);
        } else {
            throw new IllegalArgumentException("duplicate offset=" + key);
        }
        return rebalance(node);
    }

    /** Removes the node keyed {@code offset}, which must be present in the subtree. */
    private static ReadIndexEntry remove(final ReadIndexEntry node, final long offset) {
        final long key = node.offset();
        if (offset < key) {
            node.left = remove(node.left, offset);
            return rebalance(node);
        }
        if (offset > key) {
            node.right = remove(node.right, offset);
            return rebalance(node);
        }
        if (node.left == null) {
            return node.right;
        }
        if (node.right == null) {
            return node.left;
        }
        // Two children: the successor node (not just its key: the nodes are the entries) takes
        // this node's place.
        final ReadIndexEntry successor = minimum(node.right);
        successor.right = removeMin(node.right);
        successor.left = node.left;
        return rebalance(successor);
    }

    private static ReadIndexEntry removeMin(final ReadIndexEntry node) {
        if (node.left == null) {
            return node.right;
        }
        node.left = removeMin(node.left);
        return rebalance(node);
    }

    private static ReadIndexEntry minimum(final ReadIndexEntry node) {
        ReadIndexEntry min = node;
        while (min.left != null) {
            min = min.left;
        }
        return min;
    }

    /** Restores the balance of {@code node}, whose subtrees are balanced and differ by at most 2. */
    private static ReadIndexEntry rebalance(final ReadIndexEntry node) {
        final int leftHeight = height(node.left);
        final int rightHeight = height(node.right);
        if (leftHeight > rightHeight + 1) {
            final ReadIndexEntry left = node.left;
            if (height(left.left) < height(left.right)) {
                node.left = rotateLeft(left);
            }
            return rotateRight(node);
        }
        if (rightHeight > leftHeight + 1) {
            final ReadIndexEntry right = node.right;
            if (height(right.right) < height(right.left)) {
                node.right = rotateRight(right);
            }
            return rotateLeft(node);
        }
        node.height = (byte) (1 + Math.max(leftHeight, rightHeight));
        return node;
    }

    /**
     * <pre>
     *       node            left
     *       /  \            /  \
     *    left   c   -&gt;     a   node
     *    /  \                  /  \
     *   a    b                b    c
     * </pre>
     */
    private static ReadIndexEntry rotateRight(final ReadIndexEntry node) {
        final ReadIndexEntry left = node.left;
        node.left = left.right;
        left.right = node;
        updateHeight(node);
        updateHeight(left);
        return left;
    }

    /** The mirror image of {@link #rotateRight}. */
    private static ReadIndexEntry rotateLeft(final ReadIndexEntry node) {
        final ReadIndexEntry right = node.right;
        node.right = right.left;
        right.left = node;
        updateHeight(node);
        updateHeight(right);
        return right;
    }

    private static void updateHeight(final ReadIndexEntry node) {
        node.height = (byte) (1 + Math.max(height(node.left), height(node.right)));
    }

    private static int height(final ReadIndexEntry node) {
        return node == null ? 0 : node.height;
    }

    private static void forEach(final ReadIndexEntry node, final Consumer<? super ReadIndexEntry> action) {
        if (node == null) {
            return;
        }
        forEach(node.left, action);
        action.accept(node);
        forEach(node.right, action);
    }

    private static void unlinkAll(final ReadIndexEntry node) {
        if (node == null) {
            return;
        }
        unlinkAll(node.left);
        unlinkAll(node.right);
        node.unlink();
    }

    /** In-order walk computing heights bottom-up and comparing them with the stored ones. */
    private static final class InvariantChecker {
        private long count;
        private boolean seenAny;
        private long previousOffset;

        /** @return the computed height of the subtree. */
        int check(final ReadIndexEntry node, final int depth) {
            if (node == null) {
                return 0;
            }
            if (depth > MAX_HEIGHT) {
                throw new IllegalStateException("path deeper than MAX_HEIGHT=" + MAX_HEIGHT + " at offset=" + node.offset() + " (cycle?)");
            }
            final int leftHeight = check(node.left, depth + 1);
            if (seenAny && node.offset() <= previousOffset) {
                throw new IllegalStateException("order broken: offset=" + node.offset() + " follows offset=" + previousOffset + " in order");
            }
            seenAny = true;
            previousOffset = node.offset();
            count++;
            final int rightHeight = check(node.right, depth + 1);
            final int balance = leftHeight - rightHeight;
            if (balance < -1 || balance > 1) {
                throw new IllegalStateException("unbalanced: offset=" + node.offset() + " balance=" + balance
                    + " leftHeight=" + leftHeight + " rightHeight=" + rightHeight);
            }
            final int height = 1 + Math.max(leftHeight, rightHeight);
            if (node.height != height) {
                throw new IllegalStateException("wrong height: offset=" + node.offset() + " stored=" + node.height + " computed=" + height);
            }
            return height;
        }
    }
}
