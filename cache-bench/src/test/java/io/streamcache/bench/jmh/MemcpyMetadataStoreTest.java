package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class MemcpyMetadataStoreTest {
    @Test
    void shouldReturnEachEntrysBytesAndTheLengthItsWordHolds() {
        final int entryLength = 10 << 10;
        try (MemcpyMetadataStore store = new MemcpyMetadataStore(entryLength, 8)) {
            final ByteBuf destination = Unpooled.directBuffer(entryLength, entryLength);
            try {
                for (int key = 0; key < 8; key++) {
                    final ByteBuf source = BlockCacheBenchmark.sourceOf(entryLength, key);
                    store.put(key, source);
                    source.release();
                }
                for (int key = 7; key >= 0; key--) {
                    final ByteBuf expected = BlockCacheBenchmark.sourceOf(entryLength, key);
                    assertEquals(entryLength, store.get(key, destination));
                    assertArrayEquals(ByteBufUtil.getBytes(expected, 0, entryLength), ByteBufUtil.getBytes(destination, 0, entryLength),
                        "key " + key);
                    expected.release();
                }
                store.remove(3);
                assertEquals(0, store.get(3, destination), "a removed entry's word says length 0");
            } finally {
                destination.release();
            }
        }
    }
}
