package io.streamcache.segmentstore.internal.log;

/** Waiting for the store's own background threads at close: stateless, any thread. */
public final class Threads {
    private Threads() {
    }

    /**
     * Waits until {@code thread} has ended, however often the caller is interrupted meanwhile (a
     * close must not return while its thread still uses what the close frees next); the
     * interrupt is then restored on the caller.
     */
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
}
