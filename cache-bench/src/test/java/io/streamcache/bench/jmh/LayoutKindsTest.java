package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The store kinds that separate layout from bookkeeping: memcpy with slots a chosen stride apart,
 * and the cache and memcpy in a mapped file. Each holds distinct entries under distinct keys, and
 * a mapped kind leaves no file behind.
 */
class LayoutKindsTest {
    private static final int ENTRY_LENGTH = 10 << 10;
    private static final int KEYS = 8;

    @Test
    void shouldHoldEntriesAtEachStrideAndInMappedFiles(@TempDir final Path dir) throws IOException {
        final String before = System.getProperty("streamcache.bench.mappedDir");
        System.setProperty("streamcache.bench.mappedDir", dir.toString());
        try {
            for (final String kind : new String[] {"memcpy-stride-10240", "memcpy-stride-12352", "memcpy-stride-20480",
                "memcpy-mapped", "memcpy-blocks-mapped", "blockcache-mapped"}) {
                final ByteStore store = ByteStore.create(kind, KEYS, ENTRY_LENGTH, KEYS);
                final ByteBuf destination = Unpooled.directBuffer(ENTRY_LENGTH, ENTRY_LENGTH);
                try {
                    for (int key = 0; key < KEYS; key++) {
                        final ByteBuf source = BlockCacheBenchmark.sourceOf(ENTRY_LENGTH, key);
                        store.put(key, source);
                        source.release();
                    }
                    for (int key = KEYS - 1; key >= 0; key--) {
                        final ByteBuf expected = BlockCacheBenchmark.sourceOf(ENTRY_LENGTH, key);
                        assertEquals(ENTRY_LENGTH, store.get(key, destination), kind + " key " + key);
                        assertArrayEquals(ByteBufUtil.getBytes(expected, 0, ENTRY_LENGTH),
                            ByteBufUtil.getBytes(destination, 0, ENTRY_LENGTH), kind + " key " + key);
                        expected.release();
                    }
                } finally {
                    destination.release();
                    for (int key = 0; key < KEYS; key++) {
                        store.remove(key);
                    }
                    store.close();
                }
                try (Stream<Path> left = Files.list(dir)) {
                    assertEquals(0, left.count(), kind + " deletes its file on close");
                }
            }
        } finally {
            if (before == null) {
                System.clearProperty("streamcache.bench.mappedDir");
            } else {
                System.setProperty("streamcache.bench.mappedDir", before);
            }
        }
    }

    @Test
    void shouldRejectAStrideShorterThanTheEntry() {
        assertThrows(IllegalArgumentException.class, () -> ByteStore.create("memcpy-stride-10239", KEYS, ENTRY_LENGTH, KEYS));
        assertThrows(NumberFormatException.class, () -> ByteStore.create("memcpy-stride-x", KEYS, ENTRY_LENGTH, KEYS));
    }
}
