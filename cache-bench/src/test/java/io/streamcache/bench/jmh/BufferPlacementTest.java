package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Where the raw benchmarks' source and destination buffers start ({@link BlockCacheBenchmark#bufferOf}). */
class BufferPlacementTest {
    @Test
    void shouldStartEachBufferAtTheDistancePastACacheLineItWasAskedFor() {
        for (final int past : new int[] {0, 8, 16, 48, 63}) {
            for (int i = 0; i < 8; i++) {
                final ByteBuf buffer = BlockCacheBenchmark.bufferOf(10_240 + i, Integer.toString(past));
                try {
                    assertEquals(past, buffer.memoryAddress() & 63, "past=" + past);
                    assertEquals(10_240 + i, buffer.capacity());
                    assertEquals(0, buffer.writerIndex(), "empty, to be written");
                    buffer.setByte(buffer.capacity() - 1, 1); // the whole length is the buffer's
                } finally {
                    buffer.release();
                }
                assertEquals(0, buffer.refCnt(), "releasing the slice released its memory");
            }
        }
    }

    @Test
    void shouldFillTheSourceAtTheChosenPlaceWithTheSameBytesAsBefore() {
        final ByteBuf asAllocated = BlockCacheBenchmark.sourceOf(4096, 42);
        final ByteBuf placed = BlockCacheBenchmark.sourceOf(4096, 42, "16");
        try {
            assertEquals(16, placed.memoryAddress() & 63);
            assertEquals(4096, placed.readableBytes());
            assertEquals(asAllocated, placed, "the same random bytes wherever they start");
        } finally {
            asAllocated.release();
            placed.release();
        }
    }

    @Test
    void shouldRejectAPlacementOutsideACacheLine() {
        assertThrows(IllegalArgumentException.class, () -> BlockCacheBenchmark.bufferOf(64, "64"));
        assertThrows(IllegalArgumentException.class, () -> BlockCacheBenchmark.bufferOf(64, "-1"));
        assertThrows(NumberFormatException.class, () -> BlockCacheBenchmark.bufferOf(64, "aligned"));
    }
}
