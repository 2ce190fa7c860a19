package io.streamcache.core;

import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CacheFullExceptionTest {
    @Test
    void aFullCacheThrowsWithoutAStackTraceButWithTheFigures() {
        try (BlockCache cache = BlockCache.builder().capacity(2L << 20).name("tiny-full").registerMBean(false)
            .fullRetryTimeout(Duration.ZERO).build()) {
            final byte[] block = new byte[cache.blockLength()];
            while (cache.stats().freeBlockCount() > 0) {
                cache.insert(Unpooled.wrappedBuffer(block));
            }
            final CacheFullException e = assertThrows(CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(block)));
            assertEquals(0, e.getStackTrace().length, "a routine full cache must not pay for a stack walk");
            assertEquals(1, e.blocksNeeded());
            assertTrue(e.getMessage().contains("tiny-full") && e.getMessage().contains("1 blocks"), e.getMessage());
            final RuntimeException other = new IllegalStateException("closing failed");
            e.addSuppressed(other);
            assertEquals(other, e.getSuppressed()[0], "suppression still works: try-with-resources keeps what it suppressed");
        }
    }
}
