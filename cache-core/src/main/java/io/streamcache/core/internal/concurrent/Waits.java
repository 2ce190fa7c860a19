package io.streamcache.core.internal.concurrent;

import java.util.concurrent.CountDownLatch;

/**
 * Waiting that an interrupt does not cut short, for the library's own threads and phases: a
 * close must not return, nor free what a thread still uses, while that thread runs; an open must
 * not go on while its helpers still work. The interrupt is kept and restored on the caller once
 * the wait is over. Stateless; any thread.
 */
public final class Waits {
    private Waits() {
    }

    /** Waits until {@code thread} has ended (at once if it never started or already ended). */
    public static void joinUninterruptibly(final Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (final InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until {@code latch} has counted down to zero. */
    public static void awaitUninterruptibly(final CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (final InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
