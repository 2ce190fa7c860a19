package io.streamcache.core;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;

/**
 * Creates every thread the library starts; implementations are thread-safe. Each thread has a {@link Role}; an embedder that
 * must own its threads (to name them its own way, set priorities or context class loaders, run
 * them in a thread group, count them) passes its own {@code StreamcacheThreads} to the
 * builders ({@code SegmentStore.Builder.threads}, {@code CacheManager.Builder.threads}), or
 * only a {@link ThreadFactory} for some roles through {@link #withFactory}.
 *
 * <p>The library never runs work on a pool it did not create for that role, and it never
 * starts a thread except through this interface. The roles, who starts them and how many there
 * are, are listed in {@code docs/threads.md}.
 *
 * <p><b>Threading:</b> implementations must be thread-safe; the library calls
 * {@link #newThread} from the builders' {@code build()} and, for pools that grow, from
 * whatever thread submits work. The thread returned must not be started: the library starts
 * it. The library joins or interrupts its threads at close.
 */
@FunctionalInterface
public interface StreamcacheThreads {

    /** The roles of the library's threads. */
    enum Role {
        /** The log's writer: batches appends and writes and forces them (one per store). */
        LOG_WRITER("log-writer"),
        /** Completes forced appends: cache inserts, waiting reads, futures (one per store). */
        LOG_COMPLETER("log-completer"),
        /** Forces the log's file while the writer writes the next batches (LogConfig.forcesInFlight of them per store, if more than 1). */
        LOG_FORCER("log-forcer"),
        /** Pre-creates and retires log files (one per store). */
        LOG_FILES("log-files"),
        /** Reads ranges from log files for read-through (a pool per store, configurable). */
        LOG_READER("log-reader"),
        /** Copies live records out of old log files (one per store, if compaction is on). */
        COMPACTOR("compactor"),
        /** Times out waiting reads (one per store). */
        READ_TIMEOUTS("read-timeouts"),
        /** Runs eviction, promotion and demotion passes (one per cache manager). */
        CACHE_MANAGER("cache-manager"),
        /** Ages the Hitmap policy's bitmaps (one per Hitmap policy). */
        HITMAP_UPDATER("hitmap-updater"),
        /** Reads and checks log files ahead of recovery's replay while a store opens (one per open, ends with it). */
        RECOVERY_SCAN("recovery-scan"),
        /** Watches the process's memory and resizes the cache (one per {@code MemoryMonitor}, optional). */
        MEMORY_MONITOR("memory-monitor"),
        /** Writes the warm catalog of a store whose cache restarts warm (one per such store). */
        WARM_CHECKPOINT("warm-checkpoint"),
        /** Commits the pages of a direct-memory region opened with commit BACKGROUND (one per such region, ends when done or closed). */
        MEMORY_COMMIT("memory-commit");

        private final String label;

        Role(final String label) {
            this.label = label;
        }

        /**
         * @return the role's short name in thread names, e.g. {@code log-writer}.
         */
        public String label() {
            return label;
        }
    }

    /**
     * Creates (and does not start) a thread for {@code role}.
     *
     * @param role  what the thread does.
     * @param owner the name of the store, cache manager or policy the thread serves.
     * @param task  what the thread runs.
     * @return a new, unstarted thread running {@code task}.
     */
    Thread newThread(Role role, String owner, Runnable task);

    /**
     * @return the default: daemon threads named {@code streamcache-<role>-<owner>}, with
     *         {@code -<n>} appended for roles that may have several threads per owner.
     */
    static StreamcacheThreads defaults() {
        return DefaultThreads.INSTANCE;
    }

    /**
     * @param role    the role whose threads {@code factory} creates.
     * @param factory the embedder's factory for that role.
     * @return threads of {@code role} from {@code factory}, every other role from this.
     */
    default StreamcacheThreads withFactory(final Role role, final ThreadFactory factory) {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(factory, "factory");
        final StreamcacheThreads base = this;
        final Map<Role, ThreadFactory> factories = new EnumMap<>(Role.class);
        factories.put(role, factory);
        return (r, owner, task) -> {
            final ThreadFactory f = factories.get(r);
            return f == null ? base.newThread(r, owner, task) : Objects.requireNonNull(f.newThread(task),
                    "factory for role=" + r + " returned null");
        };
    }

    /**
     * @param role  the role.
     * @param owner the store, manager or policy.
     * @return a {@link ThreadFactory} for one role and owner (for the JDK's executors).
     */
    default ThreadFactory factory(final Role role, final String owner) {
        return task -> newThread(role, owner, task);
    }
}
