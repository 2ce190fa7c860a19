package io.streamcache.core.internal.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.ENTRY_LENGTH_BITS;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.ENTRY_LENGTH_MASK;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.ENTRY_LENGTH_SHIFT;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.FREE_COUNT_BITS;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.FREE_COUNT_MASK;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.FREE_COUNT_SHIFT;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.LAST_FLAG;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.LAST_SHIFT;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.LINK_BITS;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.LINK_MASK;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.MAX_ENTRY_LENGTH;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.USED_FLAG;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.USED_SHIFT;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.WORD_LENGTH;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.entryLength;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.freeCount;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.freeHeadIndex;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.freeWord;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.headerWord;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isLast;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isUsed;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.lastWord;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.nextFreeIndex;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.usedWord;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.wordOffset;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Widths, masks and round trips of the 64-bit block metadata word in each of its three forms
 * (used block, free block, buffer header), at the edges of every field and over random values.
 */
class BlockMetadataDescriptorTest {
    private static final long SEED = 0x5EED_0002L;
    private static final int RANDOM_ROUNDS = 200_000;

    /** Interesting 32-bit link values: both ends, the sign bit, and all ones. */
    private static final int[] LINKS = {0, 1, 2, 511, 512, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xFFFF_FFFE, -1};
    private static final int[] ENTRY_LENGTHS = {0, 1, 4095, 4096, 4097, 1 << 29, MAX_ENTRY_LENGTH - 1, MAX_ENTRY_LENGTH};
    private static final int[] FREE_COUNTS = {0, 1, 510, 511, 512, (int)FREE_COUNT_MASK - 1, (int)FREE_COUNT_MASK};

    @Test
    void shouldDeriveWidthsAndMasksFromNamedConstants() {
        assertEquals(8, WORD_LENGTH);
        assertEquals(32, LINK_BITS);
        assertEquals(0xFFFF_FFFFL, LINK_MASK);
        assertEquals(63, USED_SHIFT);
        assertEquals(Long.MIN_VALUE, USED_FLAG);
        assertEquals(62, LAST_SHIFT);
        assertEquals(1L << 62, LAST_FLAG);
        assertEquals(32, ENTRY_LENGTH_SHIFT);
        assertEquals(30, ENTRY_LENGTH_BITS);
        assertEquals((1L << 30) - 1, ENTRY_LENGTH_MASK);
        assertEquals((1 << 30) - 1, MAX_ENTRY_LENGTH);
        assertEquals(1_073_741_823, MAX_ENTRY_LENGTH, "2^30 - 1 bytes, not the 26 bits Pravega's literal holds");
        assertEquals(32, FREE_COUNT_SHIFT);
        assertEquals(31, FREE_COUNT_BITS);
        assertEquals(Integer.MAX_VALUE, FREE_COUNT_MASK);
        assertEquals(Long.bitCount(ENTRY_LENGTH_MASK), ENTRY_LENGTH_BITS);
        assertEquals(Long.bitCount(FREE_COUNT_MASK), FREE_COUNT_BITS);
        assertEquals(Long.bitCount(LINK_MASK), LINK_BITS);
    }

    @Test
    void shouldPartitionTheUsedWordIntoDisjointFieldsThatCoverAllBits() {
        final long[] fields = {USED_FLAG, LAST_FLAG, ENTRY_LENGTH_MASK << ENTRY_LENGTH_SHIFT, LINK_MASK};
        long union = 0;
        for (int i = 0; i < fields.length; i++) {
            for (int j = i + 1; j < fields.length; j++) {
                assertEquals(0, fields[i] & fields[j], "fields " + i + " and " + j + " overlap");
            }
            union |= fields[i];
        }
        assertEquals(-1L, union, "the used-block fields cover all 64 bits");
    }

    @Test
    void shouldKeepTheHeaderAndFreeWordsClearOfTheUsedFlag() {
        final long freeCountField = FREE_COUNT_MASK << FREE_COUNT_SHIFT;
        assertEquals(0, freeCountField & USED_FLAG);
        assertEquals(0, freeCountField & LINK_MASK);
        assertEquals(~USED_FLAG, freeCountField | LINK_MASK, "header fields cover every bit but the used flag");
    }

    @Test
    void shouldLayWordsOutAtEightBytesPerBlock() {
        assertEquals(0, wordOffset(0));
        assertEquals(8, wordOffset(1));
        assertEquals(4088, wordOffset(511));
        assertEquals(4096, wordOffset(511) + WORD_LENGTH, "512 words fill one 4 KB block exactly");
        for (int blocksPerBuffer = 2; blocksPerBuffer <= 1 << 16; blocksPerBuffer <<= 1) {
            final int blockLength = blocksPerBuffer * WORD_LENGTH;
            assertEquals(blockLength, wordOffset(blocksPerBuffer - 1) + WORD_LENGTH);
        }
    }

    @Test
    void shouldRoundTripLastWordsAtEveryEdge() {
        for (final int previous : LINKS) {
            for (final int length : ENTRY_LENGTHS) {
                final long word = lastWord(previous, length);
                final String what = "previous=" + Integer.toHexString(previous) + " length=" + length;
                assertTrue(isUsed(word), what);
                assertTrue(isLast(word), what);
                assertEquals(length, entryLength(word), what);
                assertEquals(previous, previousAddress(word), what);
            }
        }
    }

    @Test
    void shouldRoundTripUsedWordsAtEveryEdge() {
        for (final int previous : LINKS) {
            final long word = usedWord(previous);
            assertTrue(isUsed(word));
            assertFalse(isLast(word), "an all-ones previous address must not leak into the flags");
            assertEquals(0, entryLength(word));
            assertEquals(previous, previousAddress(word));
        }
    }

    @Test
    void shouldRoundTripFreeWordsAtEveryEdge() {
        for (final int next : LINKS) {
            final long word = freeWord(next);
            assertFalse(isUsed(word), "next=" + next);
            assertFalse(isLast(word), "next=" + next);
            assertEquals(next, nextFreeIndex(word));
            assertEquals(0, word >>> 32, "the high half of a free word is zero");
        }
    }

    @Test
    void shouldRoundTripHeaderWordsAtEveryEdge() {
        for (final int count : FREE_COUNTS) {
            for (final int head : LINKS) {
                final long header = headerWord(count, head);
                final String what = "count=" + count + " head=" + head;
                assertEquals(count, freeCount(header), what);
                assertEquals(head, freeHeadIndex(header), what);
                assertFalse(isUsed(header), what);
            }
        }
    }

    @Test
    void shouldRoundTripRandomLastWords() {
        final Random random = new Random(SEED);
        for (int i = 0; i < RANDOM_ROUNDS; i++) {
            final int previous = random.nextInt();
            final int length = random.nextInt(MAX_ENTRY_LENGTH + 1);
            final long word = lastWord(previous, length);
            if (!isUsed(word) || !isLast(word) || entryLength(word) != length || previousAddress(word) != previous) {
                assertEquals(previous + "/" + length, previousAddress(word) + "/" + entryLength(word), "seed=" + SEED + " round " + i);
            }
            final long used = usedWord(previous);
            if (!isUsed(used) || isLast(used) || previousAddress(used) != previous) {
                assertEquals(previous, previousAddress(used), "seed=" + SEED + " round " + i);
            }
        }
    }

    @Test
    void shouldRoundTripRandomHeaderAndFreeWords() {
        final Random random = new Random(SEED + 1);
        for (int i = 0; i < RANDOM_ROUNDS; i++) {
            final int count = random.nextInt() & Integer.MAX_VALUE;
            final int head = random.nextInt();
            final long header = headerWord(count, head);
            if (freeCount(header) != count || freeHeadIndex(header) != head || isUsed(header)) {
                assertEquals(count + "/" + head, freeCount(header) + "/" + freeHeadIndex(header), "seed=" + (SEED + 1));
            }
            final long free = freeWord(head);
            if (nextFreeIndex(free) != head || isUsed(free) || isLast(free)) {
                assertEquals(head, nextFreeIndex(free), "seed=" + (SEED + 1));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 16, 512, 1024, 1 << 16})
    void shouldCarryPackedAddressesOfEveryGeometryAsPreviousLinks(final int blocksPerBuffer) {
        final int bits = BlockAddressDescriptor.blockIndexBits(blocksPerBuffer);
        final int maxBuffer = (int)(BlockAddressDescriptor.maxBufferCount(bits) - 1);
        final Random random = new Random(SEED + blocksPerBuffer);
        final int[] buffers = {0, 1, maxBuffer - 1, maxBuffer, random.nextInt(maxBuffer)};
        final int[] blocks = {1, blocksPerBuffer / 2, blocksPerBuffer - 1, 1 + random.nextInt(blocksPerBuffer - 1)};
        for (final int buffer : buffers) {
            for (final int block : blocks) {
                final int address = BlockAddressDescriptor.pack(buffer, block, bits);
                final long word = lastWord(address, MAX_ENTRY_LENGTH);
                assertEquals(buffer, BlockAddressDescriptor.bufferIndex(previousAddress(word), bits));
                assertEquals(block, BlockAddressDescriptor.blockIndex(previousAddress(word), bits));
                assertEquals(MAX_ENTRY_LENGTH, entryLength(word));
                assertEquals(address, previousAddress(usedWord(address)));
            }
        }
    }

    @Test
    void shouldTellTheThreeKindsOfWordApart() {
        assertFalse(isUsed(freeWord(0)));
        assertTrue(isUsed(usedWord(0)));
        assertFalse(isLast(usedWord(0)));
        assertTrue(isLast(lastWord(0, 0)));
        assertTrue(isUsed(lastWord(0, 0)));
        assertEquals(USED_FLAG | LAST_FLAG, lastWord(0, 0), "an empty first-and-last block is just the two flags");
        assertEquals(0L, freeWord(0), "the free word that ends the list is zero");
        assertEquals(0L, headerWord(0, 0), "a full buffer's header is zero");
    }
}
