package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheCorruptedException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The copy routines on their own, over chains linked by hand in two buffers of direct memory:
 * copies into and out of a chain whose blocks form several runs (adjacent blocks in memory),
 * views of one run and of several, and the chain-to-chain copy of relocations.
 */
class ChainCopierTest {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 8;
    private static final int BITS = 3;
    /** Three full blocks and part of a fourth. */
    private static final int LENGTH = 3 * BLOCK + 100;

    private final BlockTable table = new BlockTable(new CacheBuffer[] {
        new CacheBuffer(0, 0, ByteBuffer.allocateDirect(BLOCKS * BLOCK), BLOCKS),
        new CacheBuffer(1, 0, ByteBuffer.allocateDirect(BLOCKS * BLOCK), BLOCKS),
    }, BLOCK, BLOCKS);
    private final ChainCopier copier = new ChainCopier(table);
    private final byte[] data = new byte[LENGTH];

    ChainCopierTest() {
        new SplittableRandom(11).nextBytes(data);
    }

    @AfterEach
    void release() {
        for (final CacheBuffer buffer : table.buffers) {
            buffer.memory.release();
        }
    }

    private static int address(final int buffer, final int block) {
        return BlockAddressDescriptor.pack(buffer, block, BITS);
    }

    /**
     * Links {@code blocks}, first to last, into an entry of {@code length} bytes.
     *
     * @return the last block's word.
     */
    private long link(final int length, final int... blocks) {
        int previous = BlockAddressDescriptor.NULL_ADDRESS;
        for (int i = 0; i < blocks.length - 1; i++) {
            table.setWord(blocks[i], BlockMetadataDescriptor.usedWord(previous));
            previous = blocks[i];
        }
        final long word = BlockMetadataDescriptor.lastWord(previous, length);
        table.setWord(blocks[blocks.length - 1], word);
        return word;
    }

    /** Runs [0#1, 0#2], [1#5], [0#6, 0#7]. */
    private int fragmented() {
        final int last = address(0, 7);
        link(LENGTH, address(0, 1), address(0, 2), address(1, 5), last);
        return last;
    }

    private byte[] read(final int last, final int from, final int to) {
        final ByteBuf out = Unpooled.buffer(to - from);
        copier.readBackward(last, table.word(last), from, to, out, 0);
        final byte[] bytes = new byte[to - from];
        out.getBytes(0, bytes);
        return bytes;
    }

    @Test
    void shouldCopyInAndOutOfAChainOfSeveralRuns() {
        final int last = fragmented();
        copier.writeBackward(last, 0, LENGTH, Unpooled.wrappedBuffer(data), 0);
        assertArrayEquals(data, read(last, 0, LENGTH));
        assertArrayEquals(Arrays.copyOfRange(data, BLOCK - 10, 2 * BLOCK + 10), read(last, BLOCK - 10, 2 * BLOCK + 10),
            "a range across a run boundary");
        final ByteBuffer heap = ByteBuffer.allocate(LENGTH);
        copier.readBackward(last, table.word(last), 0, LENGTH, heap, 0);
        assertArrayEquals(data, heap.array());
    }

    @Test
    void shouldWriteATailFromDirectAndHeapBuffersAtItsEntryOffsets() {
        final int last = fragmented();
        copier.writeBackward(last, 0, LENGTH, Unpooled.wrappedBuffer(data), 0);
        final byte[] tail = new byte[BLOCK + 50];
        new SplittableRandom(12).nextBytes(tail);
        final ByteBuffer direct = ByteBuffer.allocateDirect(tail.length + 7);
        direct.position(7);
        direct.put(tail);
        copier.writeBackward(last, LENGTH - tail.length, LENGTH, direct, 7);
        final byte[] expected = data.clone();
        System.arraycopy(tail, 0, expected, LENGTH - tail.length, tail.length);
        assertArrayEquals(expected, read(last, 0, LENGTH));
        // A range ending in the third block (1#5): the chain is entered at the block holding its end.
        final byte[] other = new byte[LENGTH];
        new SplittableRandom(13).nextBytes(other);
        copier.writeBackward(address(1, 5), BLOCK + 5, 2 * BLOCK + 20, ByteBuffer.wrap(other), BLOCK + 5);
        System.arraycopy(other, BLOCK + 5, expected, BLOCK + 5, BLOCK + 15);
        assertArrayEquals(expected, read(last, 0, LENGTH), "a range across two runs from a heap buffer");
    }

    @Test
    void shouldViewOneRunAsOneSliceAndSeveralRunsAsOneReadOnlyComposite() {
        final int last = fragmented();
        final long word = table.word(last);
        copier.writeBackward(last, 0, LENGTH, Unpooled.wrappedBuffer(data), 0);
        final ByteBuf oneRun = copier.view(last, word, 10, 2 * BLOCK - 20);
        assertEquals(1, oneRun.nioBufferCount(), "blocks 0#1 and 0#2 are adjacent: one slice");
        assertTrue(oneRun.isReadOnly());
        assertArrayEquals(Arrays.copyOfRange(data, 10, 2 * BLOCK - 10), bytes(oneRun));
        final ByteBuf whole = copier.view(last, word, 0, LENGTH);
        assertEquals(3, whole.nioBufferCount(), "three runs");
        assertTrue(whole.isReadOnly());
        assertArrayEquals(data, bytes(whole));
        assertEquals(0, copier.view(last, word, 5, 0).readableBytes());
    }

    private static byte[] bytes(final ByteBuf buf) {
        final byte[] bytes = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), bytes);
        return bytes;
    }

    @Test
    void shouldCopyAChainIntoAnotherOfTheSameBlockCount() {
        final int from = fragmented();
        copier.writeBackward(from, 0, LENGTH, Unpooled.wrappedBuffer(data), 0);
        // The target as the allocator leaves it: used, linked, its last word not yet written.
        final int to = address(1, 4);
        link(0, address(1, 1), address(1, 2), address(1, 3), to);
        table.setWord(to, BlockMetadataDescriptor.usedWord(address(1, 3)));
        copier.copyChain(from, to, LENGTH, 4);
        table.setWord(to, BlockMetadataDescriptor.lastWord(address(1, 3), LENGTH));
        assertArrayEquals(data, read(to, 0, LENGTH));
    }

    /**
     * A model test of the run walk (one load of a block's word per step inside a run): random
     * chains of the two buffers' blocks, in random order, so that runs of adjacent blocks begin
     * and end anywhere, and straddle the end of buffer 0 into buffer 1 (block 7 of buffer 0 is
     * not adjacent to block 1 of buffer 1); every range copied in and out is checked against a
     * byte array.
     */
    @Test
    void shouldCopyRandomRangesOfRandomChainsAsAByteArrayDoes() {
        final SplittableRandom random = new SplittableRandom(14);
        final int[] all = new int[2 * (BLOCKS - 1)];
        for (int i = 0; i < all.length; i++) {
            all[i] = address(i / (BLOCKS - 1), 1 + i % (BLOCKS - 1));
        }
        for (int round = 0; round < 300; round++) {
            final int count = 1 + random.nextInt(all.length);
            // Mostly ascending stretches (runs), sometimes shuffled: a random start, then ascending
            // with random jumps.
            final int[] blocks = new int[count];
            final boolean[] taken = new boolean[all.length];
            int next = random.nextInt(all.length);
            for (int i = 0; i < count; i++) {
                if (random.nextInt(4) == 0) {
                    next = random.nextInt(all.length);
                }
                while (taken[next % all.length]) {
                    next++;
                }
                next %= all.length;
                taken[next] = true;
                blocks[i] = all[next];
                next++;
            }
            final int length = (count - 1) * BLOCK + 1 + random.nextInt(BLOCK);
            final byte[] model = new byte[length];
            random.nextBytes(model);
            final int last = blocks[count - 1];
            link(length, blocks);
            copier.writeBackward(last, 0, length, Unpooled.wrappedBuffer(model), 0);
            assertArrayEquals(model, read(last, 0, length), "round " + round + ": whole entry");
            for (int k = 0; k < 5; k++) {
                final int from = random.nextInt(length);
                final int to = from + 1 + random.nextInt(length - from);
                assertArrayEquals(Arrays.copyOfRange(model, from, to), read(last, from, to), "round " + round + ": [" + from + ", " + to + ")");
                // Writes end at the entry's end (an append's tail): the chain is walked from its last block.
                final byte[] patch = new byte[length - from];
                random.nextBytes(patch);
                copier.writeBackward(last, from, length, Unpooled.wrappedBuffer(patch), 0);
                System.arraycopy(patch, 0, model, from, patch.length);
                assertArrayEquals(model, read(last, 0, length), "round " + round + ": after writing [" + from + ", " + length + ")");
            }
            for (final int block : blocks) {
                table.setWord(block, BlockMetadataDescriptor.freeWord(0));
            }
        }
    }

    @Test
    void shouldRejectAnAdjacentLinkToAFreeOrLastBlockInsideARun() {
        final int last = address(0, 3);
        link(2 * BLOCK + 1, address(0, 1), address(0, 2), last);
        table.setWord(address(0, 2), BlockMetadataDescriptor.freeWord(0));
        assertThrows(CacheCorruptedException.class, () -> read(last, 0, 2 * BLOCK + 1), "a link to a free block");
        table.setWord(address(0, 2), BlockMetadataDescriptor.lastWord(address(0, 1), 10));
        assertThrows(CacheCorruptedException.class, () -> read(last, 0, 2 * BLOCK + 1), "a link to a last block");
        table.setWord(address(0, 1), BlockMetadataDescriptor.lastWord(0, 10));
        table.setWord(address(0, 2), BlockMetadataDescriptor.usedWord(address(0, 1)));
        assertThrows(CacheCorruptedException.class, () -> read(last, 0, 2 * BLOCK + 1), "a run's first block that is a last block");
    }
}
