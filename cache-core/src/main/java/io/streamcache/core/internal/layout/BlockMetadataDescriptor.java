package io.streamcache.core.internal.layout;

/**
 * Layout of a buffer's metadata block (block 0) and of the 64-bit word it holds per block.
 * Stateless and thread-safe; who may write a word is the cache's business (see
 * {@code io.streamcache.core.cache.BlockCache}).
 *
 * <p>Block 0 of every buffer is an array of native-order 64-bit words, one per block of the
 * buffer, at byte offset {@code blockIndex * 8}. A buffer of {@code B} blocks therefore needs
 * {@code 8 * B <= blockLength}: 512 blocks of 4 KB fill block 0 exactly (0.2% overhead). Word 0
 * describes the buffer itself, since block 0 is never handed out.
 *
 * <p><b>Used block</b> (part of an entry). Entries are chains of blocks linked backwards; the
 * entry is addressed by its last block. Every block but the last is full, so only the last one
 * records a length: that of the whole entry, from which the last block's fill follows.
 * <pre>
 *   6 6 6 5 5 5 5 5 5 5 5 5 5 4 4 4 4 4 4 4 4 4 4 3 3 3 3 3 3 3 3
 *   3 2 1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2
 *  +-+-+-------------------------------------------------------------+
 *  |U|L|        ENTRY_LENGTH (30 bits; 0 unless L is set)            |
 *  +-+-+-------------------------------------------------------------+
 *  |             PREVIOUS block address (32 bits; 0 = first block)   |
 *  +-----------------------------------------------------------------+
 *   3 3 2 ...                                                       0
 *   1 0 9
 *   U: 1, the block is in use.  L: 1, the block is the last block of its entry.
 * </pre>
 *
 * <p><b>Free block</b>. Free blocks of a buffer form a singly linked list through their words:
 * <pre>
 *  +-+---------------------------------------------------------------+
 *  |0|                         0 (31 bits)                           |  bits 63..32
 *  +-+---------------------------------------------------------------+
 *  |            NEXT_FREE block index in this buffer (0 = end)       |  bits 31..0
 *  +-----------------------------------------------------------------+
 * </pre>
 *
 * <p><b>Buffer header</b> (word 0):
 * <pre>
 *  +-+---------------------------------------------------------------+
 *  |0|               FREE_COUNT: free blocks (31 bits)               |  bits 63..32
 *  +-+---------------------------------------------------------------+
 *  |          FREE_HEAD: first free block index (0 = none)           |  bits 31..0
 *  +-----------------------------------------------------------------+
 * </pre>
 */
public final class BlockMetadataDescriptor {
    /** Bytes of metadata per block. */
    public static final int WORD_LENGTH = Long.BYTES;
    /** Word index of the buffer header. */
    public static final int HEADER_INDEX = 0;

    /** Width of the low half: a previous address, a next-free index or the free-list head. */
    public static final int LINK_BITS = 32;
    public static final long LINK_MASK = (1L << LINK_BITS) - 1;

    public static final int USED_SHIFT = 63;
    public static final long USED_FLAG = 1L << USED_SHIFT;
    public static final int LAST_SHIFT = 62;
    public static final long LAST_FLAG = 1L << LAST_SHIFT;

    public static final int ENTRY_LENGTH_SHIFT = LINK_BITS;
    public static final int ENTRY_LENGTH_BITS = LAST_SHIFT - ENTRY_LENGTH_SHIFT;
    public static final long ENTRY_LENGTH_MASK = (1L << ENTRY_LENGTH_BITS) - 1;
    /** The longest entry the layout can describe: 2^30 - 1 bytes. */
    public static final int MAX_ENTRY_LENGTH = (int)ENTRY_LENGTH_MASK;

    public static final int FREE_COUNT_SHIFT = LINK_BITS;
    public static final int FREE_COUNT_BITS = USED_SHIFT - FREE_COUNT_SHIFT;
    public static final long FREE_COUNT_MASK = (1L << FREE_COUNT_BITS) - 1;

    private BlockMetadataDescriptor() {
    }

    /**
     * @return the byte offset of block {@code blockIndex}'s word inside block 0.
     */
    public static int wordOffset(final int blockIndex) {
        return blockIndex * WORD_LENGTH;
    }

    /**
     * @return the word of a used block that is not the last of its entry.
     */
    public static long usedWord(final int previousAddress) {
        return USED_FLAG | (previousAddress & LINK_MASK);
    }

    /**
     * @return the word of the last block of an entry of {@code entryLength} bytes.
     */
    public static long lastWord(final int previousAddress, final int entryLength) {
        return USED_FLAG | LAST_FLAG | ((long)entryLength << ENTRY_LENGTH_SHIFT) | (previousAddress & LINK_MASK);
    }

    /**
     * @return the word of a free block whose successor on the free list is {@code nextFreeIndex}.
     */
    public static long freeWord(final int nextFreeIndex) {
        return nextFreeIndex & LINK_MASK;
    }

    /**
     * @return the header word of a buffer.
     */
    public static long headerWord(final int freeCount, final int freeHeadIndex) {
        return ((long)freeCount << FREE_COUNT_SHIFT) | (freeHeadIndex & LINK_MASK);
    }

    public static boolean isUsed(final long word) {
        return (word & USED_FLAG) != 0;
    }

    public static boolean isLast(final long word) {
        return (word & LAST_FLAG) != 0;
    }

    public static int entryLength(final long word) {
        return (int)((word >>> ENTRY_LENGTH_SHIFT) & ENTRY_LENGTH_MASK);
    }

    public static int previousAddress(final long word) {
        return (int)word;
    }

    public static int nextFreeIndex(final long word) {
        return (int)word;
    }

    public static int freeCount(final long header) {
        return (int)((header >>> FREE_COUNT_SHIFT) & FREE_COUNT_MASK);
    }

    public static int freeHeadIndex(final long header) {
        return (int)header;
    }
}
