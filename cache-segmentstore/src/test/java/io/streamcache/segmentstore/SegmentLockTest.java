package io.streamcache.segmentstore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SegmentLock}, the lock a segment is: reentrant, exclusive under contention, a
 * {@code tryLock} that never waits, {@code hasQueuedThreads} while a thread waits, and an
 * unlock by a thread that does not hold it refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SegmentLockTest {
    /** A lock with a counter it guards (plain fields: only the lock makes them consistent). */
    private static final class Guarded extends SegmentLock {
        private static final long serialVersionUID = 1L;
        long count;
        long shadow;
    }

    @Test
    void shouldBeReentrantAndReleasedAfterAsManyUnlocks() throws Exception {
        final Guarded lock = new Guarded();
        lock.lock();
        assertTrue(lock.tryLock(), "the holder takes it again");
        lock.lock();
        assertTrue(lock.isHeldByCurrentThread());
        assertFalse(otherThreadTryLock(lock), "held: another thread's tryLock fails");
        lock.unlock();
        lock.unlock();
        assertFalse(otherThreadTryLock(lock), "still held once");
        lock.unlock();
        assertFalse(lock.isHeldByCurrentThread());
        assertTrue(otherThreadTryLock(lock), "free after the last unlock");
    }

    @Test
    void shouldRefuseAnUnlockByAThreadThatDoesNotHoldIt() throws Exception {
        final Guarded lock = new Guarded();
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
        lock.lock();
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        final Thread other = new Thread(() -> {
            try {
                lock.unlock();
            } catch (final Throwable t) {
                thrown.set(t);
            }
        });
        other.start();
        other.join();
        assertTrue(thrown.get() instanceof IllegalMonitorStateException, String.valueOf(thrown.get()));
        assertTrue(lock.isHeldByCurrentThread(), "still held by its owner");
        lock.unlock();
    }

    @Test
    void shouldShowAQueuedThreadWhileOneWaits() throws Exception {
        final Guarded lock = new Guarded();
        lock.lock();
        final CountDownLatch acquired = new CountDownLatch(1);
        final Thread waiter = new Thread(() -> {
            lock.lock();
            try {
                acquired.countDown();
            } finally {
                lock.unlock();
            }
        });
        waiter.start();
        while (!lock.hasQueuedThreads()) {
            Thread.onSpinWait();
        }
        assertEquals(1, acquired.getCount(), "the waiter waits while the lock is held");
        lock.unlock();
        acquired.await();
        waiter.join();
        assertFalse(lock.hasQueuedThreads());
    }

    @Test
    void shouldExcludeUnderContention() throws Exception {
        final Guarded lock = new Guarded();
        final int threads = 6;
        final int rounds = 50_000;
        final AtomicBoolean broken = new AtomicBoolean();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final boolean trying = t % 2 == 0;
            all.add(new Thread(() -> {
                try {
                    start.await();
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                int done = 0;
                while (done < rounds) {
                    if (trying) {
                        if (!lock.tryLock()) {
                            Thread.onSpinWait();
                            continue;
                        }
                    } else {
                        lock.lock();
                    }
                    try {
                        // Reentrant inside, as an eviction pass inside an append is.
                        lock.lock();
                        try {
                            if (lock.count != lock.shadow) {
                                broken.set(true);
                            }
                            lock.count++;
                            lock.shadow++;
                        } finally {
                            lock.unlock();
                        }
                    } finally {
                        lock.unlock();
                    }
                    done++;
                }
            }));
        }
        all.forEach(Thread::start);
        start.countDown();
        for (final Thread thread : all) {
            thread.join();
        }
        assertFalse(broken.get(), "two threads were inside at once");
        lock.lock();
        try {
            assertEquals((long) threads * rounds, lock.count);
        } finally {
            lock.unlock();
        }
    }

    private static boolean otherThreadTryLock(final SegmentLock lock) throws InterruptedException {
        final AtomicBoolean got = new AtomicBoolean();
        final Thread other = new Thread(() -> {
            if (lock.tryLock()) {
                got.set(true);
                lock.unlock();
            }
        });
        other.start();
        other.join();
        return got.get();
    }
}
