package io.streamcache.segmentstore.queue;

import io.streamcache.core.CacheClosedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MessageQueueStore#close()} of a store that owns its cache while other threads append
 * and read: every call returns correct bytes or throws {@link CacheClosedException}, and none
 * reads memory the close released (a crash of this test's JVM would be that failure). The store
 * closes its segment store first, which deletes each segment under the segment's lock, and only
 * then the cache.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CloseWhileUsedTest {
    @TempDir
    Path directory;

    @Test
    void shouldFinishOrRefuseEveryCallWhileClosing() throws Exception {
        final AtomicLong completed = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        for (int round = 0; round < 20; round++) {
            final MessageQueueStore mq = MessageQueueStore.open(directory.resolve("r" + round), 4L << 20);
            final AtomicReference<Throwable> wrong = new AtomicReference<>();
            final CountDownLatch started = new CountDownLatch(4);
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                final int id = t;
                final Thread thread = new Thread(() -> {
                    started.countDown();
                    final byte[] message = new byte[3000 + id * 1000];
                    for (int i = 0; i < message.length; i++) {
                        message[i] = (byte) (id * 31 + i);
                    }
                    try {
                        for (long n = 0; ; n++) {
                            mq.append("t" + id, (int) (n % 8), ByteBuffer.wrap(message));
                            final Map<Integer, ByteBuffer> got = mq.getRange("t" + id, (int) (n % 8), 0, 4);
                            for (final ByteBuffer m : got.values()) {
                                if (!m.equals(ByteBuffer.wrap(message))) {
                                    wrong.compareAndSet(null, new AssertionError("thread " + id + " read other bytes"));
                                    return;
                                }
                            }
                            completed.incrementAndGet();
                        }
                    } catch (final CacheClosedException e) {
                        refused.incrementAndGet();
                    } catch (final RuntimeException e) {
                        wrong.compareAndSet(null, e);
                    }
                });
                threads.add(thread);
                thread.start();
            }
            started.await();
            Thread.sleep(5 + round);
            mq.close();
            for (final Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(60));
                assertFalse(thread.isAlive(), "round " + round + ": a call did not return after the close");
            }
            if (wrong.get() != null) {
                throw new AssertionError("round " + round, wrong.get());
            }
        }
        assertTrue(completed.get() > 0, "nothing ran before the closes");
        assertEquals(20L * 4, refused.get(), "every thread ends refused by the close");
    }
}
