package io.streamcache.segmentstore.internal.index;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * The AVL algorithms of a segment's read index as static methods over a tree's root entry, so
 * that the owner keeps the root in a field of its own (a {@code Segment} does: one reference,
 * instead of a 24-byte {@link AvlReadIndex} object per segment, which matters at hundreds of
 * thousands of segments) and no tree object exists. Lookups take the root; updates take the
 * root and return the new one, which the caller stores. {@link AvlReadIndex} is the same tree
 * as an object with a size, for standalone use (tests, benchmarks, the simulator).
 *
 * <p><b>Threading:</b> none of its own: the owner serializes every call on one tree (a segment,
 * under its lock). See {@link AvlReadIndex} for the tree's shape, balance and costs; everything
 * said there of its methods holds for the methods of the same name here.
 */
public final class ReadIndexTree {
    /**
     * Greatest height an AVL tree of at most {@link Integer#MAX_VALUE} entries can reach
     * ({@code 1.4405 log2(2^31 + 1) - 0.3277 < 45}); {@link #checkInvariants} rejects taller
     * paths, which also stops it on a cycle.
     */
    static final int MAX_HEIGHT = 45;

    private ReadIndexTree() {
    }

    /**
     * Links {@code entry} into the tree rooted at {@code root}. Allocates nothing.
     *
     * @return the new root.
     * @throws IllegalArgumentException if the offset is already a key, or the entry is already
     *                                  linked into a tree; the tree is then unchanged.
     * @throws NullPointerException     if {@code entry} is null.
     */
    public static ReadIndexEntry insert(final ReadIndexEntry root, final ReadIndexEntry entry) {
        if (Objects.requireNonNull(entry, "entry").isLinked()) {
            throw new IllegalArgumentException("entry already in a tree: offset=" + entry.offset());
        }
        // A duplicate throws on the way down, before any link or height changes.
        return insertAt(root, entry);
    }

    /**
     * Unlinks {@code entry}, which must be a node of the tree rooted at {@code root} (looked up
     * by its offset). Allocates nothing.
     *
     * @return the new root.
     * @throws IllegalArgumentException if the tree holds no entry at its offset, or another one; the tree is then unchanged.
     */
    public static ReadIndexEntry remove(final ReadIndexEntry root, final ReadIndexEntry entry) {
        if (get(root, entry.offset()) != entry) {
            throw new IllegalArgumentException("not in this tree: " + entry);
        }
        final ReadIndexEntry newRoot = removeAt(root, entry.offset());
        entry.unlink();
        return newRoot;
    }

    /**
     * Truncation: removes entries from the first onward while they end at or before
     * {@code offset} (all of them for {@code Long.MAX_VALUE}). Costs O(k log n) for k removed
     * entries; allocates nothing.
     *
     * @param removed called with each removed entry, already unlinked, in offset order; may be
     *                null. It must not call into this tree; it may recycle the entry.
     * @return the new root.
     */
    public static ReadIndexEntry removeBefore(final ReadIndexEntry root, final long offset, final Consumer<? super ReadIndexEntry> removed) {
        ReadIndexEntry newRoot = root;
        ReadIndexEntry first = first(newRoot);
        while (first != null && first.endOffset() <= offset) {
            newRoot = removeMin(newRoot);
            first.unlink();
            if (removed != null) {
                removed.accept(first);
            }
            first = first(newRoot);
        }
        return newRoot;
    }

    /**
     * Unlinks every entry of the tree (so each may be inserted again); the new root is null. O(n).
     */
    public static void clear(final ReadIndexEntry root) {
        unlinkAll(root);
    }

    /**
     * @return the entry keyed exactly {@code offset}, or null.
     */
    public static ReadIndexEntry get(final ReadIndexEntry root, final long offset) {
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
    public static ReadIndexEntry floor(final ReadIndexEntry root, final long offset) {
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
    public static ReadIndexEntry ceiling(final ReadIndexEntry root, final long offset) {
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
    public static ReadIndexEntry higher(final ReadIndexEntry root, final long offset) {
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
    public static ReadIndexEntry lower(final ReadIndexEntry root, final long offset) {
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
     * The read path's lookup: the floor entry, if it covers {@code offset}.
     *
     * @return the entry with the greatest offset {@code <= offset} if
     *         {@code offset < entry.endOffset()}, else null (a gap, or past the end).
     */
    public static ReadIndexEntry floorContaining(final ReadIndexEntry root, final long offset) {
        final ReadIndexEntry floor = floor(root, offset);
        return floor != null && offset - floor.offset() < floor.length() ? floor : null;
    }

    /**
     * @return the entry with the least offset {@code > entry.offset()}, or null (searched from the root).
     */
    public static ReadIndexEntry next(final ReadIndexEntry root, final ReadIndexEntry entry) {
        return higher(root, entry.offset());
    }

    /**
     * @return the entry with the smallest offset, or null if empty.
     */
    public static ReadIndexEntry first(final ReadIndexEntry root) {
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
    public static ReadIndexEntry last(final ReadIndexEntry root) {
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
     * entry's length, address and generation, but must not insert, remove or recycle.
     */
    public static void forEach(final ReadIndexEntry root, final Consumer<? super ReadIndexEntry> action) {
        forEachIn(root, action);
    }

    /**
     * @return how many entries the tree holds: O(n), for diagnostics.
     */
    public static int count(final ReadIndexEntry root) {
        return root == null ? 0 : 1 + count(root.left) + count(root.right);
    }

    /**
     * @return the number of levels: 0 when empty, 1 for a single entry.
     */
    public static int height(final ReadIndexEntry root) {
        return root == null ? 0 : root.height;
    }

    /**
     * Verifies the structure, for tests and debugging: keys strictly ascending in order, stored
     * heights equal to the computed ones, every balance in [-1, 1]. O(n); allocates a little.
     *
     * @return the number of entries.
     * @throws IllegalStateException naming the first violation found and the offset it was found at.
     */
    public static long checkInvariants(final ReadIndexEntry root) {
        final InvariantChecker checker = new InvariantChecker();
        checker.check(root, 1);
        return checker.count;
    }

    // ---------------------------------------------------------------------------------------
    // AVL machinery: each update returns the new root of the subtree it was given.

    private static ReadIndexEntry insertAt(final ReadIndexEntry node, final ReadIndexEntry entry) {
        if (node == null) {
            entry.height = 1;
            return entry;
        }
        final long key = entry.offset();
        if (key < node.offset()) {
            node.left = insertAt(node.left, entry);
        } else if (key > node.offset()) {
            node.right = insertAt(node.right, entry);
        } else {
            throw new IllegalArgumentException("duplicate offset=" + key);
        }
        return rebalance(node);
    }

    /** Removes the node keyed {@code offset}, which must be present in the subtree. */
    private static ReadIndexEntry removeAt(final ReadIndexEntry node, final long offset) {
        final long key = node.offset();
        if (offset < key) {
            node.left = removeAt(node.left, offset);
            return rebalance(node);
        }
        if (offset > key) {
            node.right = removeAt(node.right, offset);
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

    static ReadIndexEntry removeMin(final ReadIndexEntry node) {
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

    private static void forEachIn(final ReadIndexEntry node, final Consumer<? super ReadIndexEntry> action) {
        if (node == null) {
            return;
        }
        forEachIn(node.left, action);
        action.accept(node);
        forEachIn(node.right, action);
    }

    static void unlinkAll(final ReadIndexEntry node) {
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
