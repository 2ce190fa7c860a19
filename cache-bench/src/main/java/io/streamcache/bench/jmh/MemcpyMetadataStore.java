package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * The physical limit of a cache whose entry lengths live apart from the data, as the block
 * cache's do (in block 0 of each buffer): {@link MemcpyStore}'s plain copies, plus one 8-byte
 * length word per entry in a separate native array, spaced the way the block cache spaces the
 * metadata words of consecutive entries (one word per {@value #BLOCK_LENGTH}-byte block of
 * data). A get must read the word before it knows how much to copy: on a working set larger
 * than the caches, that is one dependent miss per metadata cache line, which no layout with
 * out-of-line metadata avoids (a {@code byte[]} or an OHC entry keeps its length in a header
 * next to its data, where the copy's first line brings it in).
 *
 * <pre>
 *   data:     | slot 0: entryLength bytes | slot 1 | slot 2 | ...            (as MemcpyStore)
 *   metadata: | word(slot 0) | pad ... | word(slot 1) | ...    8 bytes per BLOCK_LENGTH of data
 * </pre>
 *
 * <p>Not thread-safe by contract (two threads could copy into one slot): one instance per thread.
 */
final class MemcpyMetadataStore implements ByteStore {
    /** Data bytes per metadata word: the block cache's smallest benchmarked block. */
    static final int BLOCK_LENGTH = 2048;

    private final int entryLength;
    private final int slotCount;
    private final long base;
    private final long metadata;
    private final long metadataLength;

    MemcpyMetadataStore(final int entryLength, final int slotCount) {
        this.entryLength = entryLength;
        this.slotCount = slotCount;
        final long length = (long) entryLength * slotCount;
        this.base = UNSAFE.allocateMemory(length);
        UNSAFE.setMemory(base, length, (byte) 0);
        this.metadataLength = (length / BLOCK_LENGTH + 1) * Long.BYTES;
        this.metadata = UNSAFE.allocateMemory(metadataLength);
        UNSAFE.setMemory(metadata, metadataLength, (byte) 0);
    }

    @Override
    public void put(final int key, final ByteBuf data) {
        final int length = data.readableBytes();
        UNSAFE.copyMemory(data.memoryAddress() + data.readerIndex(), slot(key), length);
        UNSAFE.putLong(word(key), length);
    }

    @Override
    public int get(final int key, final ByteBuf destination) {
        final int length = (int) UNSAFE.getLong(word(key));
        UNSAFE.copyMemory(slot(key), destination.memoryAddress(), length);
        return length;
    }

    @Override
    public void remove(final int key) {
        UNSAFE.putLong(word(key), 0L);
    }

    private long slot(final int key) {
        return base + (long) (key % slotCount) * entryLength;
    }

    private long word(final int key) {
        return metadata + (long) (key % slotCount) * entryLength / BLOCK_LENGTH * Long.BYTES;
    }

    @Override
    public void close() {
        UNSAFE.freeMemory(base);
        UNSAFE.freeMemory(metadata);
    }
}
