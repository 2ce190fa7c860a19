package io.streamcache.core;

import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link StreamcacheThreads#defaults()}: daemon threads named {@code streamcache-<role>-<owner>},
 * the log readers numbered. Stateless but for the readers' counter; thread-safe.
 */
final class DefaultThreads implements StreamcacheThreads {
    static final DefaultThreads INSTANCE = new DefaultThreads();
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private DefaultThreads() {
    }

    @Override
    public Thread newThread(final Role role, final String owner, final Runnable task) {
        final String name = "streamcache-" + role.label() + "-" + owner
            + (role == Role.LOG_READER || role == Role.LOG_FORCER ? "-" + SEQUENCE.incrementAndGet() : "");
        final Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    @Override
    public String toString() {
        return "StreamcacheThreads.defaults()";
    }
}
