package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.queue.MessageQueueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Small contracts of the public surface: a released buffer is an argument error (not Netty's
 * {@code IllegalReferenceCountException}, an {@link IllegalStateException}) and changes nothing;
 * after {@code close()} the queries throw {@link CacheClosedException} as the Javadoc says, rather
 * than answer; and {@code close()} deletes no segment of a log (they come back on reopen).
 */
class ClosedAndReleasedContractTest {
    @TempDir
    Path root;

    private static ByteBuf released() {
        final ByteBuf data = Unpooled.directBuffer(16).writeZero(16);
        data.release();
        return data;
    }

    @Test
    void shouldRefuseAReleasedBufferAsAnArgumentAndAppendNothing() {
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = TestSegments.store(cache, 4096)) {
            store.create("s");
            final IllegalArgumentException sync = assertThrows(IllegalArgumentException.class, () -> store.append("s", released()));
            assertTrue(sync.getMessage().contains("released"), sync.getMessage());
            assertThrows(IllegalArgumentException.class, () -> store.append("s", 0, released()));
            assertThrows(IllegalArgumentException.class, () -> store.appendAsync("s", released()));
            assertThrows(IllegalArgumentException.class, () -> store.appendAsync("s", 0, released()));
            assertEquals(0, store.info("s").length());
        }
    }

    @Test
    void shouldThrowCacheClosedFromExistsAfterClose() {
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            final SegmentStore store = TestSegments.store(cache, 4096);
            store.create("s");
            store.close();
            assertThrows(CacheClosedException.class, () -> store.exists("s"));
        }
    }

    @Test
    void shouldThrowCacheClosedFromTheQueueCountsAfterClose() {
        final MessageQueueStore queues = MessageQueueStore.open(root.resolve("mq"), 8L << 20);
        queues.append("t", 0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertEquals(1, queues.messageCount("t", 0));
        queues.close();
        assertThrows(CacheClosedException.class, () -> queues.messageCount("t", 0));
        assertThrows(CacheClosedException.class, () -> queues.queueCount());
    }
}
