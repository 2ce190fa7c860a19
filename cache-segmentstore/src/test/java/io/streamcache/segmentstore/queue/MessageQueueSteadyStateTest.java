package io.streamcache.segmentstore.queue;

import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Allocation of the appending thread in steady state: the queues exist, the producer
 * reuses its buffer; the message index and its directory grow off the heap, so 20,000 appends
 * allocate less than a quarter of a byte each on the appending thread. Counted in bytes by
 * the JVM ({@code ThreadMXBean#getCurrentThreadAllocatedBytes}), never timed. With the ends on
 * the heap this thread allocated 8 bytes a message plus the chunks' headers (167 KB here).
 */
@Timeout(120)
class MessageQueueSteadyStateTest {
    @TempDir
    Path directory;

    @Test
    void shouldAllocateAlmostNothingPerMessageOnTheAppendingThread() {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // NEVER: completed once written, so the loop does not wait for 20,000 forces (the path is the same).
        final LogConfig log = LogConfig.builder(directory).fileLength(16L << 20).preWrite(false).spareFiles(0)
            .durability(DurabilityPolicy.NEVER).build();
        try (MessageQueueStore mq = MessageQueueStore.open(log, 64L << 20)) {
            final ByteBuffer message = ByteBuffer.allocateDirect(100);
            final int queues = 10;
            final int messages = 20_000;
            // Warm-up: every queue exists, its index has a directory, the paths are compiled.
            for (int i = 0; i < 3000; i++) {
                append(mq, message, i % queues, i);
            }
            final long[] steps = new long[messages / 1000];
            final long before = threads.getCurrentThreadAllocatedBytes();
            long last = before;
            for (int i = 0; i < messages; i++) {
                append(mq, message, i % queues, i);
                if (i % 1000 == 999) {
                    final long now = threads.getCurrentThreadAllocatedBytes();
                    steps[i / 1000] = now - last;
                    last = now;
                }
            }
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertEquals(3000 / queues + messages / queues, mq.messageCount("t", 3));
            // Measured at 2.2 KB (0.1 B a message), a few hundred bytes in 3 of the 20 steps (rare pooled-request
            // replacements and the like); the heap index allocated 167 KB here.
            assertTrue(allocated < messages / 4, "bytes allocated by " + messages + " appends: " + allocated
                + ", per 1,000: " + java.util.Arrays.toString(steps));
            assertTrue(mq.messageIndexBytes() > 0, "the ends are in the index memory");
        }
    }

    private static void append(final MessageQueueStore mq, final ByteBuffer message, final int queue, final int i) {
        message.clear();
        message.putInt(queue).putInt(i);
        message.position(0).limit(8 + (i % 92));
        mq.append("t", queue, message);
    }
}
