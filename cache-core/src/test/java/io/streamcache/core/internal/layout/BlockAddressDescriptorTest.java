package io.streamcache.core.internal.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;

import static io.streamcache.core.internal.layout.BlockAddressDescriptor.ADDRESS_BITS;
import static io.streamcache.core.internal.layout.BlockAddressDescriptor.NULL_ADDRESS;
import static io.streamcache.core.internal.layout.BlockAddressDescriptor.blockIndex;
import static io.streamcache.core.internal.layout.BlockAddressDescriptor.blockIndexBits;
import static io.streamcache.core.internal.layout.BlockAddressDescriptor.bufferIndex;
import static io.streamcache.core.internal.layout.BlockAddressDescriptor.maxBufferCount;
import static io.streamcache.core.internal.layout.BlockAddressDescriptor.pack;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Round trips of the 32-bit block address for several geometries, at the edges of both fields
 * and over random values.
 */
class BlockAddressDescriptorTest {
    private static final long SEED = 0x5EED_0001L;
    private static final int RANDOM_ROUNDS = 200_000;

    @Test
    void shouldUseThirtyTwoBitAddressesWithZeroAsNull() {
        assertEquals(32, ADDRESS_BITS);
        assertEquals(0, NULL_ADDRESS);
        assertEquals(0, BlockAddressDescriptor.METADATA_BLOCK_INDEX);
    }

    @Test
    void shouldAddressSixteenTerabytesWithDefaultGeometry() {
        final int bits = blockIndexBits(512);
        assertEquals(9, bits);
        assertEquals(1L << 23, maxBufferCount(bits));
        final long addressableBytes = maxBufferCount(bits) * 512 * 4096L;
        assertEquals(16L << 40, addressableBytes);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 8, 16, 64, 256, 512, 1024, 1 << 16, 1 << 20, 1 << 30})
    void shouldDeriveBlockBitsAsLog2AndCoverAllAddresses(final int blocksPerBuffer) {
        final int bits = blockIndexBits(blocksPerBuffer);
        assertEquals(blocksPerBuffer, 1 << bits);
        assertEquals(1L << ADDRESS_BITS, maxBufferCount(bits) * blocksPerBuffer, "every 32-bit value is one (buffer, block) pair");
    }

    @ParameterizedTest
    @ValueSource(ints = {Integer.MIN_VALUE, -512, -1, 0, 1, 3, 6, 511, 513, 1000, Integer.MAX_VALUE})
    void shouldRejectBlocksPerBufferThatIsNotAPowerOfTwoOfAtLeastTwo(final int blocksPerBuffer) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> blockIndexBits(blocksPerBuffer));
        assertTrue(e.getMessage().contains("blocksPerBuffer=" + blocksPerBuffer), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 16, 512, 1024, 1 << 16, 1 << 30})
    void shouldRoundTripEveryFieldAtItsEdges(final int blocksPerBuffer) {
        final int bits = blockIndexBits(blocksPerBuffer);
        final int maxBuffer = (int)(maxBufferCount(bits) - 1);
        final int maxBlock = blocksPerBuffer - 1;
        final int[] buffers = {0, 1, 2, maxBuffer / 2, maxBuffer - 1, maxBuffer};
        final int[] blocks = {0, 1, maxBlock / 2, maxBlock - 1, maxBlock};
        for (final int buffer : buffers) {
            for (final int block : blocks) {
                final int address = pack(buffer, block, bits);
                assertEquals(buffer, bufferIndex(address, bits), () -> "buffer=" + buffer + " block=" + block);
                assertEquals(block, blockIndex(address, bits), () -> "buffer=" + buffer + " block=" + block);
            }
        }
        assertEquals(NULL_ADDRESS, pack(0, 0, bits), "buffer 0 block 0 is the null address");
        assertEquals(-1, pack(maxBuffer, maxBlock, bits), "the last block of the last buffer is all ones");
        assertEquals(maxBlock, pack(0, maxBlock, bits), "block bits are the low bits");
        assertEquals(-blocksPerBuffer, pack(maxBuffer, 0, bits), "buffer bits are the high bits");
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 16, 512, 1024, 1 << 16, 1 << 30})
    void shouldTreatTheBufferIndexAsUnsigned(final int blocksPerBuffer) {
        final int bits = blockIndexBits(blocksPerBuffer);
        final int topBitAddress = 0x8000_0000;
        assertEquals(1 << (31 - bits), bufferIndex(topBitAddress, bits));
        assertEquals(0, blockIndex(topBitAddress, bits));
        assertTrue(bufferIndex(-1, bits) >= 0, "bufferIndex of all ones must not be negative");
        assertEquals(maxBufferCount(bits) - 1, bufferIndex(-1, bits));
        assertEquals(blocksPerBuffer - 1, blockIndex(-1, bits));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 8, 512, 4096, 1 << 16, 1 << 30})
    void shouldBeABijectionOverRandomAddresses(final int blocksPerBuffer) {
        final int bits = blockIndexBits(blocksPerBuffer);
        final Random random = new Random(SEED + blocksPerBuffer);
        for (int i = 0; i < RANDOM_ROUNDS; i++) {
            final int address = random.nextInt();
            final int buffer = bufferIndex(address, bits);
            final int block = blockIndex(address, bits);
            assertTrue(block >= 0 && block < blocksPerBuffer);
            assertTrue(Integer.toUnsignedLong(buffer) < maxBufferCount(bits));
            if (pack(buffer, block, bits) != address) {
                assertEquals(address, pack(buffer, block, bits), "address=" + Integer.toHexString(address));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 8, 512, 4096, 1 << 16, 1 << 30})
    void shouldRoundTripRandomBufferAndBlockPairs(final int blocksPerBuffer) {
        final int bits = blockIndexBits(blocksPerBuffer);
        final long buffers = maxBufferCount(bits);
        final Random random = new Random(SEED ^ blocksPerBuffer);
        for (int i = 0; i < RANDOM_ROUNDS; i++) {
            final int buffer = (int)((random.nextLong() >>> 1) % buffers);
            final int block = random.nextInt(blocksPerBuffer);
            final int address = pack(buffer, block, bits);
            if (bufferIndex(address, bits) != buffer || blockIndex(address, bits) != block) {
                assertEquals(buffer + "/" + block, bufferIndex(address, bits) + "/" + blockIndex(address, bits),
                    "blocksPerBuffer=" + blocksPerBuffer);
            }
        }
    }

    @Test
    void shouldGiveDistinctAddressesToEveryBlockOfSmallGeometries() {
        for (int blocksPerBuffer = 2; blocksPerBuffer <= 64; blocksPerBuffer <<= 1) {
            final int bits = blockIndexBits(blocksPerBuffer);
            int expected = 0;
            for (int buffer = 0; buffer < 64; buffer++) {
                for (int block = 0; block < blocksPerBuffer; block++) {
                    assertEquals(expected++, pack(buffer, block, bits), "addresses are dense and ordered");
                }
            }
        }
    }
}
