package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheConfigurationException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The block cache store of the raw benchmarks: the store kinds that name a geometry, and that a store of one holds its entries. */
class BlockCacheStoreTest {
    @Test
    void shouldReadTheGeometryOfAKind() {
        assertArrayEquals(new int[] {2048, 512 << 10}, BlockCacheStore.geometryOf("blockcache-2k"), "2 KB blocks, the largest buffer");
        assertArrayEquals(new int[] {4096, 2 << 20}, BlockCacheStore.geometryOf("blockcache-4k"));
        assertArrayEquals(new int[] {1024, 128 << 10}, BlockCacheStore.geometryOf("blockcache-1k"));
        assertArrayEquals(new int[] {8192, 2 << 20}, BlockCacheStore.geometryOf("blockcache-8k"), "at most 2 MB buffers");
        assertArrayEquals(new int[] {4096, 512 << 10}, BlockCacheStore.geometryOf("blockcache-4k-512k"), "a buffer of its own");
        for (final String kind : new String[] {"blockcache", "blockcache-16m", "blockcache-", "blockcache-k", "blockcache-3k",
            "blockcache-0k", "blockcache-2048", "blockcache-2k-", "blockcache-2k-512", "blockcache-2k-512k-1k", "blockcache-x2k",
            "blockcache-2048k", "hashmap", "memcpy-2k"}) {
            assertNull(BlockCacheStore.geometryOf(kind), kind);
        }
    }

    @Test
    void shouldCreateAStoreOfTheKindsGeometryThatIsThreadSafeAndRejectOthers() {
        assertTrue(ByteStore.isThreadSafe("blockcache-2k"));
        assertTrue(ByteStore.isThreadSafe("blockcache-4k-512k"));
        assertThrows(IllegalArgumentException.class, () -> ByteStore.create("blockcache-3k", 1, 10, 1));
        assertThrows(CacheConfigurationException.class,
            () -> new BlockCacheStore(1, 16 << 20, 2048, 2 << 20), "2 MB buffers of 2 KB blocks: the metadata does not fit block 0");
    }

    @Test
    void shouldHoldEntriesAtEachGeometry() {
        final int entryLength = 10 << 10;
        for (final String kind : new String[] {"blockcache-1k", "blockcache-2k", "blockcache-4k", "blockcache-4k-512k"}) {
            final int[] geometry = BlockCacheStore.geometryOf(kind);
            final BlockCacheStore store = new BlockCacheStore(8, 4L * geometry[1], geometry[0], geometry[1]);
            final ByteBuf destination = Unpooled.directBuffer(entryLength, entryLength);
            try {
                assertArrayEquals(geometry, store.geometry(), kind);
                for (int key = 0; key < 8; key++) {
                    final ByteBuf source = BlockCacheBenchmark.sourceOf(entryLength, key);
                    store.put(key, source);
                    source.release();
                }
                store.remove(2);
                for (int key = 7; key >= 0; key--) {
                    if (key == 2) {
                        continue;
                    }
                    final ByteBuf expected = BlockCacheBenchmark.sourceOf(entryLength, key);
                    assertEquals(entryLength, store.get(key, destination), kind + " key " + key);
                    assertArrayEquals(ByteBufUtil.getBytes(expected, 0, entryLength), ByteBufUtil.getBytes(destination, 0, entryLength),
                        kind + " key " + key);
                    expected.release();
                }
            } finally {
                destination.release();
                for (int key = 0; key < 8; key++) {
                    if (key != 2) {
                        store.remove(key);
                    }
                }
                store.close();
            }
        }
    }
}
