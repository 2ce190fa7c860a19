package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import org.agrona.BufferUtil;
import org.agrona.IoUtil;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * The physical limit: a plain memcpy of the same bytes between direct memory and a working set
 * of native memory as large as the cache's, with no bookkeeping at all. {@code remove} does
 * nothing. Keys map onto {@code slotCount} slots.
 *
 * <p>The slots start on a 4 KB boundary, as the cache's blocks do: a copy on the benchmark
 * machine is fastest when its source and destination both start on a 64-byte boundary (see
 * docs/performance/block-cache.md, "Where the buffers start"), so the limit and
 * the cache see the caller's buffers from the same placement. Before, the slots started where
 * malloc put them (16 bytes past a page), and the limit was faster with buffers 16 past a line
 * than on one, the opposite of the cache.
 *
 * <p>Not thread-safe by contract (two threads could copy into one slot): one instance per thread.
 */
final class MemcpyStore implements ByteStore {
    private static final long PAGE = 4096;
    private final int entryLength;
    /** Bytes from one slot's start to the next: the entry length, or rounded up to whole blocks. */
    private final int slotStride;
    private final int slotCount;
    private final long allocated;
    private final long base;
    /** The mapping the slots are in, or null (native memory). */
    private final MappedByteBuffer mapped;
    private final Path file;

    MemcpyStore(final int entryLength, final int slotCount) {
        this(entryLength, slotCount, entryLength);
    }

    /**
     * @param slotStride bytes from one slot's start to the next, at least {@code entryLength}:
     *                   the entry length rounded up to whole blocks lays the slots out as the
     *                   cache lays entries inserted one after another (a 10 KB entry in three 4 KB
     *                   blocks, 2 KB unused after it), without the cache's bookkeeping.
     */
    MemcpyStore(final int entryLength, final int slotCount, final int slotStride) {
        this(entryLength, slotCount, slotStride, null);
    }

    /**
     * @param file null for native memory, else a file to create, map (shared) and delete on close:
     *             on a tmpfs mounted with {@code huge=always} the slots lie in 2 MB pages.
     */
    MemcpyStore(final int entryLength, final int slotCount, final int slotStride, final Path file) {
        if (slotStride < entryLength) {
            throw new IllegalArgumentException("slotStride=" + slotStride + " < entryLength=" + entryLength);
        }
        this.entryLength = entryLength;
        this.slotStride = slotStride;
        this.slotCount = slotCount;
        final long length = (long)slotStride * slotCount;
        this.file = file;
        if (file == null) {
            this.mapped = null;
            this.allocated = UNSAFE.allocateMemory(length + PAGE);
            this.base = (allocated + PAGE - 1) & -PAGE;
        } else {
            // Whole 2 MB pages, so that a huge-page tmpfs backs every slot with one.
            final long mappedLength = (length + (2L << 20) - 1) & -(2L << 20);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                this.mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, mappedLength);
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
            this.allocated = 0;
            this.base = BufferUtil.address(mapped);
        }
        UNSAFE.setMemory(base, length, (byte)0);
    }

    @Override
    public void put(final int key, final ByteBuf data) {
        UNSAFE.copyMemory(data.memoryAddress() + data.readerIndex(), slot(key), data.readableBytes());
    }

    @Override
    public int get(final int key, final ByteBuf destination) {
        UNSAFE.copyMemory(slot(key), destination.memoryAddress(), entryLength);
        return entryLength;
    }

    @Override
    public void remove(final int key) {
        // Nothing to free: the limit does no bookkeeping.
    }

    private long slot(final int key) {
        return base + (long)(key % slotCount) * slotStride;
    }

    @Override
    public void close() {
        if (mapped == null) {
            UNSAFE.freeMemory(allocated);
            return;
        }
        IoUtil.unmap(mapped);
        try {
            Files.deleteIfExists(file);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
