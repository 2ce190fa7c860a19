package io.streamcache.core.internal.layout;

/**
 * Encoding of a 32-bit block address: which buffer, and which block inside it. Stateless and
 * thread-safe.
 *
 * <p>The split between the two parts follows the cache geometry: with {@code B} blocks per
 * buffer ({@code B} a power of two), the low {@code log2(B)} bits name the block and the
 * remaining high bits name the buffer. With the default 2 MB buffers of 4 KB blocks
 * ({@code B = 512}, 9 block bits):
 *
 * <pre>
 *   3                   2                   1                   0
 *   1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0
 *  +-----------------------------------------------+-----------------+
 *  |           buffer index (23 bits)              | block (9 bits)  |
 *  +-----------------------------------------------+-----------------+
 * </pre>
 *
 * The address is unsigned: all 2^32 values are usable, so 2^23 buffers x 2 MB = 16 TB are
 * addressable. Block 0 of every buffer holds metadata, so an address whose block part is 0 never
 * names data; in particular address 0 is never valid and serves as "no block".
 */
public final class BlockAddressDescriptor {
    /** Width of an address. */
    public static final int ADDRESS_BITS = Integer.SIZE;
    /** The reserved address that names no block ("null"). */
    public static final int NULL_ADDRESS = 0;
    /** Index of the block of every buffer that holds the buffer's metadata. */
    public static final int METADATA_BLOCK_INDEX = 0;

    private BlockAddressDescriptor() {
    }

    /**
     * @param blocksPerBuffer a power of two, at least 2.
     * @return how many low bits of an address name the block.
     */
    public static int blockIndexBits(final int blocksPerBuffer) {
        if (blocksPerBuffer < 2 || Integer.bitCount(blocksPerBuffer) != 1) {
            throw new IllegalArgumentException("blocksPerBuffer=" + blocksPerBuffer + " must be a power of two >= 2");
        }
        return Integer.numberOfTrailingZeros(blocksPerBuffer);
    }

    /**
     * @param blockIndexBits as given by {@link #blockIndexBits(int)}.
     * @return how many buffers the address can name.
     */
    public static long maxBufferCount(final int blockIndexBits) {
        return 1L << (ADDRESS_BITS - blockIndexBits);
    }

    /**
     * @return the address of block {@code blockIndex} of buffer {@code bufferIndex}.
     */
    public static int pack(final int bufferIndex, final int blockIndex, final int blockIndexBits) {
        return (bufferIndex << blockIndexBits) | blockIndex;
    }

    /**
     * @return the buffer part of an address (unsigned).
     */
    public static int bufferIndex(final int address, final int blockIndexBits) {
        return address >>> blockIndexBits;
    }

    /**
     * @return the block part of an address.
     */
    public static int blockIndex(final int address, final int blockIndexBits) {
        return address & ((1 << blockIndexBits) - 1);
    }
}
