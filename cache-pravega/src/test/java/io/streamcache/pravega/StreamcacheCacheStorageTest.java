package io.streamcache.pravega;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pravega.common.util.BufferView;
import io.pravega.common.util.ByteArraySegment;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.shared.protocol.netty.ByteBufWrapper;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.cache.BlockCache;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Where {@link StreamcacheCacheStorage} differs from Pravega's {@code DirectMemoryCache} on
 * purpose (input Pravega's cache silently accepts), and what is ours alone: no allocation on
 * insert, append and delete, the checks of the constructor.
 */
class StreamcacheCacheStorageTest {
    private static final int BLOCK = 4096;
    private static final int MB = 1 << 20;

    private final StreamcacheCacheStorage storage = StreamcacheCacheStorage.create(4 * MB);

    @AfterEach
    void close() {
        storage.close();
    }

    private byte[] read(final int address) {
        return storage.get(address).getCopy();
    }

    @Test
    void shouldIgnoreASecondDeleteWhoseBlockNowBelongsToAnotherEntry() {
        final int first = storage.insert(new ByteArraySegment(AbstractCacheStorageTest.bytes(1, 100)));
        storage.delete(first);
        // The freed block is reused by the next entry; Pravega's cache would free it again.
        final byte[] data = AbstractCacheStorageTest.bytes(2, 3 * BLOCK);
        final int second = storage.insert(new ByteArraySegment(data));
        if (second != first) {
            storage.delete(first);
        }
        assertArrayEquals(data, read(second));
        assertEquals(data.length, storage.getState().getStoredBytes());
    }

    @Test
    void shouldReplaceADeletedAddressWithoutDeletingTheNewEntry() {
        final int deleted = storage.insert(new ByteArraySegment(AbstractCacheStorageTest.bytes(3, 5)));
        storage.delete(deleted);
        // Pravega's cache inserts (reusing the freed block, so the same address) then deletes that address.
        final int address = storage.replace(deleted, new ByteArraySegment(AbstractCacheStorageTest.bytes(4, 6)));
        assertArrayEquals(AbstractCacheStorageTest.bytes(4, 6), read(address));
        assertEquals(6, storage.getState().getStoredBytes());
    }

    @Test
    void shouldRejectAddressesItNeverReturnsAndChangeNothing() {
        final int live = storage.insert(new ByteArraySegment(new byte[10]));
        final long entries = storage.blockCache().stats().entryCount();
        final int pastTheEnd = 0x7fff_0001;
        final int metadataBlock = 1 << 10; // block 0 of buffer 1 (Pravega's layout: 10 bits of block id)
        final int pastTheBlocks = 1 << 9; // block id 512 of buffer 0: a buffer has 512 blocks
        for (final int address : new int[] {pastTheEnd, metadataBlock, pastTheBlocks, -5}) {
            assertThrows(InvalidAddressException.class, () -> storage.replace(address, new ByteArraySegment(new byte[100])));
            assertThrows(InvalidAddressException.class, () -> storage.get(address));
            assertThrows(InvalidAddressException.class, () -> storage.delete(address));
            assertThrows(InvalidAddressException.class, () -> storage.append(address, 0, new ByteArraySegment(new byte[1])));
        }
        assertEquals(entries, storage.blockCache().stats().entryCount(), "a failed replace must not leak its new entry");
        assertEquals(10, storage.getState().getStoredBytes());
        assertEquals(10, read(live).length);
    }

    @Test
    void shouldCheckTheWholeExpectedLengthOnAppend() {
        final int address = storage.insert(new ByteArraySegment(new byte[100]));
        // Pravega's cache compares only the last block's length, so this append would pass there.
        assertThrows(IncorrectEntryLengthException.class,
            () -> storage.append(address, 100 + BLOCK, new ByteArraySegment(new byte[10])));
        assertEquals(100, read(address).length);
    }

    @Test
    void shouldIgnoreADeleteOfTheOnlyEntryOfABufferTwice() {
        final int address = storage.insert(new ByteArraySegment(new byte[10]));
        storage.delete(address);
        storage.delete(address);
        assertEquals(0, storage.getState().getStoredBytes());
    }

    @Test
    void shouldReturnNullForAMiddleBlockOfALiveEntry() {
        final byte[] data = AbstractCacheStorageTest.bytes(6, 3 * BLOCK);
        final int address = storage.insert(new ByteArraySegment(data));
        assertNull(storage.get(address - 1));
        assertArrayEquals(data, read(address));
    }

    @Test
    void shouldReturnNullForAnAddressThatNoLongerEndsItsEntry() {
        final int address = storage.insert(BufferView.empty());
        final int other = storage.insert(new ByteArraySegment(new byte[2 * BLOCK]));
        assertTrue(address != other);
        storage.delete(address);
        assertNull(storage.get(address));
    }

    @Test
    void shouldStoreTheReadableBytesOfANettyBufferWithAReaderIndex() {
        final byte[] data = AbstractCacheStorageTest.bytes(5, 2 * BLOCK);
        final ByteBuf buf = Unpooled.wrappedBuffer(data).readerIndex(1000);
        final int address = storage.insert(new ByteBufWrapper(buf));
        final byte[] expected = new byte[data.length - 1000];
        System.arraycopy(data, 1000, expected, 0, expected.length);
        assertArrayEquals(expected, read(address));
    }

    @Test
    void shouldRejectABlockCacheThatAlreadyHasAFullHandler() {
        try (BlockCache cache = BlockCache.builder().capacity(2 * MB).registerMBean(false).fullHandler(blocks -> false).build()) {
            assertThrows(IllegalStateException.class, () -> new StreamcacheCacheStorage(cache));
        }
    }

    @Test
    void shouldAllocateNothingOnInsertAppendAndDeleteBeyondWhatTheViewAllocates() {
        final ByteBuffer direct = ByteBuffer.allocateDirect(10 * 1024);
        final BufferView data = new ByteBufWrapper(Unpooled.wrappedBuffer(direct));
        final BufferView small = new ByteArraySegment(new byte[100]);
        final CollectCounter counter = new CollectCounter();
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final int rounds = 20_000;
        long viewBytes = 0;
        long ourBytes = 0;
        final ByteBuffer scratch = ByteBuffer.allocateDirect(BLOCK);
        for (int pass = 0; pass < 3; pass++) {
            final long before = threads.getCurrentThreadAllocatedBytes();
            // What the views allocate when read the way the storage reads them: a view longer
            // than a block through collect(), a shorter one through copyTo(ByteBuffer).
            for (int i = 0; i < rounds; i++) {
                data.collect(counter);
                scratch.clear();
                small.copyTo(scratch);
            }
            final long middle = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < rounds; i++) {
                final int address = storage.insert(data);
                storage.append(address, 10 * 1024, small);
                storage.delete(address);
            }
            final long after = threads.getCurrentThreadAllocatedBytes();
            viewBytes = middle - before;
            ourBytes = after - middle;
        }
        // The views allocate their own ByteBuffers; the storage adds less than a byte per round.
        assertTrue(ourBytes <= viewBytes + rounds, "storage allocated " + ourBytes + " B, the views "
            + viewBytes + " B, over " + rounds + " rounds; counted " + counter.parts);
    }

    /** Counts the parts a view hands over, so that collecting them is not optimized away. */
    private static final class CollectCounter implements BufferView.Collector<RuntimeException> {
        long parts;

        @Override
        public void accept(final ByteBuffer buffer) {
            parts += buffer.remaining();
        }
    }

    @Test
    void shouldKeepAddressesPositiveWithTheDefaultLayout() {
        final int address = storage.insert(new ByteArraySegment(new byte[1]));
        assertTrue(address > CacheStorage.NO_ADDRESS);
    }
}
