package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.entryLength;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isLast;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isUsed;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;
import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * Moves bytes into and out of a {@link BlockCache}'s block chains: copies from a source
 * ({@link ByteBuf} or {@link ByteBuffer}) into a chain, from a chain into a destination, from one
 * chain into another (relocation), and read-only views over a range of a chain.
 *
 * <p>A chain is linked backwards from the entry's last block, so every routine walks backwards
 * from the block holding the end of its range. Blocks that are adjacent in memory form a run,
 * copied with one memcpy and viewed as one slice: an entry allocated from a fresh buffer is
 * copied in one piece and viewed as one slice.
 * <pre>
 *   entry offsets:  [ block k-3 ][ block k-2 ][ block k-1 ][ block k (last, partial) ]
 *   memory:         [  buf 5 #9  ][ buf 2 #40 ][ buf 2 #41 ][ buf 2 #42 ]
 *                   \__ run 1 __/ \____________ run 2: one copy ________/
 * </pre>
 *
 * <p><b>Threading:</b> stateless beyond the immutable {@link BlockTable}; callable from any
 * thread under the cache's contract: the caller owns the entry (writes) or reads an entry nobody
 * changes meanwhile (reads). Allocates nothing, except the Netty wrappers of a view.
 */
final class ChainCopier {
    private final BlockTable table;
    private final CacheBuffer[] buffers;
    private final int blockLength;
    private final int blockShift;
    private final int blockIndexBits;
    private final int blockIndexMask;

    ChainCopier(final BlockTable table) {
        this.table = table;
        this.buffers = table.buffers;
        this.blockLength = table.blockLength;
        this.blockShift = table.blockShift;
        this.blockIndexBits = table.blockIndexBits;
        this.blockIndexMask = table.blockIndexMask;
    }

    /**
     * Copies source bytes that belong at entry offsets [from, to) into the chain whose block
     * holding offset {@code to - 1} is {@code last}; the source's bytes start at
     * {@code srcIndexOfFrom}, its indices are not moved.
     */
    void writeBackward(final int last, final int from, final int to, final ByteBuf src, final int srcIndexOfFrom) {
        if (to != from) {
            transferBackward(true, last, table.blockStartOf(to - 1), from, to, src, srcIndexOfFrom);
        }
    }

    /** As {@link #writeBackward(int, int, int, ByteBuf, int)}, from a {@link ByteBuffer}'s absolute indices. */
    void writeBackward(final int last, final int from, final int to, final ByteBuffer src, final int srcIndexOfFrom) {
        if (to != from) {
            transferBackward(true, last, table.blockStartOf(to - 1), from, to, src, srcIndexOfFrom);
        }
    }

    /**
     * Copies entry bytes [from, to) of the entry whose last block is {@code last} into the
     * destination at {@code dstIndexOfFrom}; the destination's indices are not moved.
     */
    void readBackward(final int last, final long lastWord, final int from, final int to, final ByteBuf dst, final int dstIndexOfFrom) {
        if (to != from) {
            transferBackward(false, last, table.lastBlockStart(entryLength(lastWord)), from, to, dst, dstIndexOfFrom);
        }
    }

    /** As {@link #readBackward(int, long, int, int, ByteBuf, int)}, into a {@link ByteBuffer}'s absolute indices. */
    void readBackward(final int last, final long lastWord, final int from, final int to, final ByteBuffer dst, final int dstIndexOfFrom) {
        if (to != from) {
            transferBackward(false, last, table.lastBlockStart(entryLength(lastWord)), from, to, dst, dstIndexOfFrom);
        }
    }

    /**
     * Copies entry bytes [from, to), {@code to > from}, into ({@code in}) or out of the chain
     * whose block {@code last} starts at entry offset {@code lastStart}, walking backwards from
     * the block holding {@code to - 1}; a run of blocks adjacent in memory is one copy.
     *
     * @param other the copy's other side: a {@link ByteBuf} or a {@link ByteBuffer}, never null
     *              (the typed overloads above are the only callers). One parameter dispatched by
     *              type per run, rather than a wrapper object per copy, keeps the copy
     *              allocation-free without relying on escape analysis.
     */
    private void transferBackward(
        final boolean in, final int last, final int lastStart, final int from, final int to,
        final Object other, final int indexOfFrom) {
        int current = last;
        int currentStart = lastStart;
        final int endBlockStart = table.blockStartOf(to - 1);
        while (currentStart > endBlockStart) {
            current = table.step(current);
            currentStart -= blockLength;
        }
        int end = to;
        while (true) {
            final long run = runBackward(current, currentStart, from);
            final int runFirst = (int)run;
            final int previous = (int)(run >>> Integer.SIZE);
            final int runStart = currentStart - ((current - runFirst) << blockShift);
            final int start = Math.max(runStart, from);
            final int index = indexOfFrom + (start - from);
            final int length = end - start;
            final int offsetInBlock = start - runStart;
            if (other instanceof ByteBuf buf) {
                if (in) {
                    copyIn(runFirst, offsetInBlock, buf, index, length);
                } else {
                    copyOut(runFirst, offsetInBlock, buf, index, length);
                }
            } else if (in) {
                copyIn(runFirst, offsetInBlock, (ByteBuffer)other, index, length);
            } else {
                copyOut(runFirst, offsetInBlock, (ByteBuffer)other, index, length);
            }
            if (start == from) {
                return;
            }
            end = start;
            current = previous;
            currentStart = runStart - blockLength;
        }
    }

    /**
     * Finds the run of blocks adjacent in memory that ends at {@code last} (starting at entry
     * offset {@code lastStart}), going back no further than the block holding {@code from}.
     * Inside a run every block is in {@code last}'s buffer, so each step is one load of the
     * block's word from that buffer's metadata, which also checks it as {@link BlockTable#step}
     * does (used, not last); a link to a block that is not adjacent ends the run and is checked
     * by {@link BlockTable#step}.
     *
     * @return the run's first block in the low 32 bits; in the high 32 bits the block before
     *         the run in the chain, or 0 if the run reaches {@code from}.
     */
    private long runBackward(final int last, final int lastStart, final int from) {
        if (lastStart <= from) {
            return last & BlockMetadataDescriptor.LINK_MASK;
        }
        final long metadata = buffers[last >>> blockIndexBits].address;
        int first = last;
        int start = lastStart;
        long word = UNSAFE.getLong(metadata + ((long)(first & blockIndexMask) << 3));
        while (start > from) {
            final int previous = previousAddress(word);
            if (previous != first - 1) {
                return ((long)table.step(first) << Integer.SIZE) | (first & BlockMetadataDescriptor.LINK_MASK);
            }
            word = UNSAFE.getLong(metadata + ((long)(previous & blockIndexMask) << 3));
            if (!isUsed(word) || isLast(word)) {
                table.step(first); // throws CacheCorruptedException, naming the bad link
            }
            first = previous;
            start -= blockLength;
        }
        return first & BlockMetadataDescriptor.LINK_MASK;
    }

    private void copyIn(final int address, final int offsetInBlock, final ByteBuf src, final int srcIndex, final int length) {
        final CacheBuffer buffer = buffers[address >>> blockIndexBits];
        final int index = table.blockOffset(address) + offsetInBlock;
        if (src.hasMemoryAddress()) {
            // The cache's own range is computed, the source's was checked by BlockCache: one
            // memcpy, without Netty's second round of index checks.
            UNSAFE.copyMemory(src.memoryAddress() + srcIndex, buffer.address + index, length);
        } else {
            buffer.memory.setBytes(index, src, srcIndex, length);
        }
    }

    private void copyIn(final int address, final int offsetInBlock, final ByteBuffer src, final int srcIndex, final int length) {
        final CacheBuffer buffer = buffers[address >>> blockIndexBits];
        final int index = table.blockOffset(address) + offsetInBlock;
        if (src.isDirect()) {
            UNSAFE.copyMemory(BufferUtil.address(src) + srcIndex, buffer.address + index, length);
        } else if (src.hasArray()) {
            UNSAFE.copyMemory(src.array(), BufferUtil.ARRAY_BASE_OFFSET + src.arrayOffset() + srcIndex, null, buffer.address + index, length);
        } else {
            buffer.memory.setBytes(index, src.duplicate().limit(srcIndex + length).position(srcIndex));
        }
    }

    private void copyOut(final int address, final int offsetInBlock, final ByteBuf dst, final int dstIndex, final int length) {
        final CacheBuffer buffer = buffers[address >>> blockIndexBits];
        final int index = table.blockOffset(address) + offsetInBlock;
        if (dst.hasMemoryAddress()) {
            UNSAFE.copyMemory(buffer.address + index, dst.memoryAddress() + dstIndex, length);
        } else {
            buffer.memory.getBytes(index, dst, dstIndex, length);
        }
    }

    private void copyOut(final int address, final int offsetInBlock, final ByteBuffer dst, final int dstIndex, final int length) {
        final CacheBuffer buffer = buffers[address >>> blockIndexBits];
        final int index = table.blockOffset(address) + offsetInBlock;
        if (dst.isDirect()) {
            UNSAFE.copyMemory(buffer.address + index, BufferUtil.address(dst) + dstIndex, length);
        } else {
            UNSAFE.copyMemory(null, buffer.address + index, dst.array(), BufferUtil.ARRAY_BASE_OFFSET + dst.arrayOffset() + dstIndex, length);
        }
    }

    /**
     * Copies the {@code length} bytes of the chain ending at {@code from} into the chain of the
     * same block count ending at {@code to}, walking both backwards; a run of blocks adjacent in
     * memory on both sides is one copy. The target chain's words are read unchecked: its blocks
     * are freshly taken, "used, not last".
     */
    void copyChain(final int from, final int to, final int length, final int count) {
        if (length == 0) {
            return;
        }
        int src = from;
        int dst = to;
        int bytes = length - table.lastBlockStart(length);
        int remainingBlocks = count - 1;
        while (true) {
            // The run [srcFirst, src] / [dstFirst, dst]: both adjacent in memory, last block partial.
            int srcFirst = src;
            int dstFirst = dst;
            int runBytes = bytes;
            int srcPrevious = BlockAddressDescriptor.NULL_ADDRESS;
            int dstPrevious = BlockAddressDescriptor.NULL_ADDRESS;
            while (remainingBlocks > 0) {
                srcPrevious = table.step(srcFirst);
                dstPrevious = previousAddress(table.word(dstFirst));
                remainingBlocks--;
                if (srcPrevious != srcFirst - 1 || dstPrevious != dstFirst - 1) {
                    break;
                }
                srcFirst = srcPrevious;
                dstFirst = dstPrevious;
                runBytes += blockLength;
                srcPrevious = BlockAddressDescriptor.NULL_ADDRESS;
            }
            UNSAFE.copyMemory(buffers[srcFirst >>> blockIndexBits].address + table.blockOffset(srcFirst),
                buffers[dstFirst >>> blockIndexBits].address + table.blockOffset(dstFirst), runBytes);
            if (srcPrevious == BlockAddressDescriptor.NULL_ADDRESS) {
                return;
            }
            src = srcPrevious;
            dst = dstPrevious;
            bytes = blockLength;
        }
    }

    /**
     * Returns a read-only view of bytes [offset, offset + length) of the entry whose last block
     * is {@code address} with word {@code word}: one slice when the range lies in one run of
     * adjacent blocks, else a composite of one slice per run. The views are unreleasable: they
     * read the cache's memory, which the cache owns.
     */
    ByteBuf view(final int address, final long word, final int offset, final int length) {
        if (length == 0) {
            return Unpooled.EMPTY_BUFFER.asReadOnly();
        }
        final int end = offset + length;
        int current = address;
        int currentStart = table.lastBlockStart(entryLength(word));
        final int endBlockStart = table.blockStartOf(end - 1);
        while (currentStart > endBlockStart) {
            current = table.step(current);
            currentStart -= blockLength;
        }
        final int maxParts = ((end - 1) >>> blockShift) - (offset >>> blockShift) + 1;
        ByteBuf[] parts = null;
        int partIndex = maxParts;
        int partEnd = end;
        while (true) {
            int runFirst = current;
            int runStart = currentStart;
            int previous = BlockAddressDescriptor.NULL_ADDRESS;
            while (runStart > offset) {
                previous = table.step(runFirst);
                if (previous != runFirst - 1) {
                    break;
                }
                runFirst = previous;
                runStart -= blockLength;
            }
            final int start = Math.max(runStart, offset);
            final ByteBuf part = slice(runFirst, start - runStart, partEnd - start).asReadOnly();
            if (start == offset && parts == null) {
                // The whole range is one run of adjacent blocks: a single slice.
                return Unpooled.unreleasableBuffer(part);
            }
            if (parts == null) {
                parts = new ByteBuf[maxParts];
            }
            parts[--partIndex] = part;
            if (start == offset) {
                break;
            }
            partEnd = start;
            current = previous;
            currentStart = runStart - blockLength;
        }
        if (partIndex > 0) {
            parts = Arrays.copyOfRange(parts, partIndex, maxParts);
        }
        // FixedCompositeByteBuf rejects writes but reports isReadOnly() == false: say it.
        return Unpooled.unreleasableBuffer(Unpooled.wrappedUnmodifiableBuffer(parts).asReadOnly());
    }

    private ByteBuf slice(final int address, final int offsetInBlock, final int length) {
        return buffers[address >>> blockIndexBits].memory.slice(table.blockOffset(address) + offsetInBlock, length);
    }
}
