package io.streamcache.core.cache;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tier's stack of buffers with free blocks on its own: last in first out against a
 * {@link Deque}, buffers of a tier that does not start at buffer 0, and many threads pushing and
 * popping at once without losing or duplicating a buffer.
 */
class BufferStackTest {
    private static final int BLOCKS = 4;

    private static CacheBuffer[] buffers(final int count) {
        final CacheBuffer[] buffers = new CacheBuffer[count];
        for (int i = 0; i < count; i++) {
            buffers[i] = new CacheBuffer(i, 0, ByteBuffer.allocateDirect(BLOCKS * 4096), BLOCKS);
        }
        return buffers;
    }

    @Test
    void shouldBeEmptyWhenNew() {
        assertNull(new BufferStack(buffers(3), 0, 3).pop());
    }

    @Test
    void shouldPopTheBufferPushedLast() {
        final CacheBuffer[] buffers = buffers(3);
        final BufferStack stack = new BufferStack(buffers, 0, 3);
        stack.push(buffers[0]);
        stack.push(buffers[2]);
        stack.push(buffers[1]);
        assertSame(buffers[1], stack.pop());
        assertSame(buffers[2], stack.pop());
        stack.push(buffers[1]);
        assertSame(buffers[1], stack.pop());
        assertSame(buffers[0], stack.pop());
        assertNull(stack.pop());
    }

    @Test
    void shouldHoldTheBuffersOfATierThatStartsPastBufferZero() {
        final CacheBuffer[] buffers = buffers(6);
        final BufferStack stack = new BufferStack(buffers, 4, 2);
        stack.push(buffers[4]);
        stack.push(buffers[5]);
        assertSame(buffers[5], stack.pop());
        assertSame(buffers[4], stack.pop());
        assertNull(stack.pop());
    }

    @Test
    void shouldMatchADequeUnderRandomPushesAndPops() {
        final int count = 17;
        final CacheBuffer[] buffers = buffers(count);
        final BufferStack stack = new BufferStack(buffers, 0, count);
        final Deque<CacheBuffer> model = new ArrayDeque<>();
        final List<CacheBuffer> out = new ArrayList<>(List.of(buffers));
        final SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 100_000; step++) {
            if (!out.isEmpty() && (model.isEmpty() || random.nextBoolean())) {
                final CacheBuffer buffer = out.remove(random.nextInt(out.size()));
                stack.push(buffer);
                model.push(buffer);
            } else {
                final CacheBuffer popped = stack.pop();
                assertSame(model.poll(), popped, "step " + step);
                if (popped != null) {
                    out.add(popped);
                }
            }
        }
    }

    /**
     * Threads pop a buffer, hold it for a moment and push it back, as allocating threads do; each
     * buffer must be held by one thread at a time, and every buffer must be back at the end.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldNeverHandOneBufferToTwoThreadsAtOnce() throws InterruptedException {
        final int count = 8;
        final int threads = 4;
        final CacheBuffer[] buffers = buffers(count);
        final BufferStack stack = new BufferStack(buffers, 0, count);
        for (int i = count - 1; i >= 0; i--) {
            stack.push(buffers[i]);
        }
        final AtomicIntegerArray holders = new AtomicIntegerArray(count);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final Thread worker = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 200_000; i++) {
                        final CacheBuffer buffer = stack.pop();
                        if (buffer == null) {
                            continue;
                        }
                        if (holders.incrementAndGet(buffer.index) != 1) {
                            throw new AssertionError("buffer " + buffer.index + " handed to two threads at once");
                        }
                        Thread.onSpinWait();
                        holders.decrementAndGet(buffer.index);
                        stack.push(buffer);
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "buffer-stack-" + t);
            workers.add(worker);
            worker.start();
        }
        start.countDown();
        for (final Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        final boolean[] seen = new boolean[count];
        for (int i = 0; i < count; i++) {
            final CacheBuffer buffer = stack.pop();
            assertTrue(buffer != null && !seen[buffer.index], "buffer " + i + " popped once");
            seen[buffer.index] = true;
        }
        assertNull(stack.pop());
        assertEquals(count, seen.length);
    }
}
