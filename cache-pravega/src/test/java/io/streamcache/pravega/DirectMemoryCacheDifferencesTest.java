package io.streamcache.pravega;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.Unpooled;
import io.pravega.common.util.ByteArraySegment;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;
import io.pravega.shared.protocol.netty.ByteBufWrapper;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What Pravega 0.13's {@code DirectMemoryCache} does with the input {@link StreamcacheCacheStorage}
 * rejects or treats as the interface documents ({@link StreamcacheCacheStorageTest} checks ours on
 * the same input). These pin the differences docs/pravega.md lists: if a Pravega upgrade changes
 * one, a test here fails and the page needs an update.
 */
class DirectMemoryCacheDifferencesTest {
    private static final int BLOCK = 4096;

    private final CacheStorage pravega = new DirectMemoryCache(4L << 20);

    @AfterEach
    void close() {
        pravega.close();
    }

    @Test
    void shouldShowThatASecondDeleteFreesABlockOfTheEntryThatReusedIt() {
        final int first = pravega.insert(new ByteArraySegment(new byte[100]));
        pravega.delete(first);
        final int second = pravega.insert(new ByteArraySegment(AbstractCacheStorageTest.bytes(1, 3 * BLOCK)));
        pravega.delete(first); // the first block of the second entry
        assertThrows(RuntimeException.class, () -> pravega.get(second).getCopy(), "the second entry's chain is broken");
    }

    @Test
    void shouldShowThatReplacingADeletedAddressDeletesTheNewEntry() {
        final int deleted = pravega.insert(new ByteArraySegment(new byte[5]));
        pravega.delete(deleted);
        final int address = pravega.replace(deleted, new ByteArraySegment(new byte[6]));
        assertEquals(deleted, address, "the new entry reuses the freed block");
        assertNull(pravega.get(address), "and the delete that follows the insert frees it");
    }

    @Test
    void shouldShowThatAnOutOfRangeReplaceThrowsAfterLeakingItsEntry() {
        assertThrows(ArrayIndexOutOfBoundsException.class, () -> pravega.replace(0x7fff_0001, new ByteArraySegment(new byte[100])));
        assertEquals(100, pravega.getState().getStoredBytes(), "the inserted entry stays, with no address to free it by");
    }

    @Test
    void shouldShowThatADeleteInAnEmptiedBufferThrows() {
        final int address = pravega.insert(new ByteArraySegment(new byte[10]));
        pravega.delete(address);
        assertThrows(IllegalStateException.class, () -> pravega.delete(address));
    }

    @Test
    void shouldShowThatAnAppendChecksOnlyTheLastBlocksLength() {
        final int address = pravega.insert(new ByteArraySegment(new byte[100]));
        assertEquals(10, pravega.append(address, 100 + BLOCK, new ByteArraySegment(new byte[10])));
    }

    @Test
    void shouldShowThatAGetOfAMiddleBlockReturnsAPrefixOfTheEntry() {
        final byte[] data = AbstractCacheStorageTest.bytes(2, 3 * BLOCK);
        final int address = pravega.insert(new ByteArraySegment(data));
        assertEquals(2 * BLOCK, pravega.get(address - 1).getLength(), "blocks 1 and 2 of 3");
    }

    @Test
    void shouldShowThatTheReaderIndexOfANettySourceIsIgnored() {
        final byte[] data = AbstractCacheStorageTest.bytes(3, 2 * BLOCK);
        final int address = pravega.insert(new ByteBufWrapper(Unpooled.wrappedBuffer(data).readerIndex(1000)));
        final byte[] stored = pravega.get(address).getCopy();
        assertEquals(data.length - 1000, stored.length);
        assertFalse(Arrays.equals(Arrays.copyOfRange(data, 1000, data.length), stored), "the bytes come from index 0");
        assertArrayEquals(Arrays.copyOfRange(data, 0, stored.length), stored);
    }
}
