package io.streamcache.pravega;

import io.pravega.common.ObjectClosedException;
import io.pravega.common.util.BufferView;
import io.pravega.common.util.ByteArraySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link StreamcacheCacheStorage#close()} while other threads insert, read and delete, as
 * Pravega's read index does on its own executor during a container's shutdown (the JMH smoke
 * run crashed the JVM once with a delete that freed into memory the close had just released):
 * every operation either completes or throws {@link ObjectClosedException}, the close frees the
 * memory only once they returned, and operations after it are refused. A crash of this test's
 * JVM is the failure this guards against.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CloseWhileOperatingTest {
    private static final int THREADS = 4;
    private static final int ROUNDS = 30;

    @Test
    void shouldLetOperationsFinishOrBeRefusedWhileClosing() throws Exception {
        long refused = 0;
        long completed = 0;
        for (int round = 0; round < ROUNDS; round++) {
            final StreamcacheCacheStorage storage = StreamcacheCacheStorage.create(4 << 20);
            final CountDownLatch started = new CountDownLatch(THREADS);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final AtomicLong refusals = new AtomicLong();
            final AtomicLong done = new AtomicLong();
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final byte[] data = new byte[1000 + 3000 * t];
                final Thread thread = new Thread(() -> {
                    started.countDown();
                    try {
                        while (true) {
                            final int address = storage.insert(new ByteArraySegment(data));
                            final BufferView view = storage.get(address);
                            if (view == null || view.getLength() != data.length) {
                                throw new AssertionError("entry of " + data.length + " bytes read as " + view);
                            }
                            storage.delete(address);
                            done.incrementAndGet();
                        }
                    } catch (final ObjectClosedException e) {
                        refusals.incrementAndGet();
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "operating-" + t);
                threads.add(thread);
                thread.start();
            }
            started.await();
            Thread.sleep(round % 5);
            storage.close();
            for (final Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            }
            if (failure.get() != null) {
                throw new AssertionError("round " + round + ": an operation failed otherwise than refused", failure.get());
            }
            assertEquals(THREADS, refusals.get(), "every thread ends refused by the close");
            assertThrows(ObjectClosedException.class, () -> storage.insert(new ByteArraySegment(new byte[10])));
            assertThrows(ObjectClosedException.class, () -> storage.delete(1));
            refused += refusals.get();
            completed += done.get();
        }
        assertTrue(completed > 0, "no operation ran before the closes: the test raced nothing");
        assertEquals((long) THREADS * ROUNDS, refused);
    }
}
