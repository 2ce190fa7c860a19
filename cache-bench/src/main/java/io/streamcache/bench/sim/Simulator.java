package io.streamcache.bench.sim;

import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.GenerationPolicy;
import io.streamcache.segmentstore.eviction.HitmapPolicy;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;

import java.util.List;

/**
 * Replays a {@link Trace} against one cache: stateless and thread-safe (every run builds its own
 * cache; traces are immutable).
 */
public final class Simulator {
    /** The policies, in the order of the report's columns. */
    public static final List<String> POLICIES = List.of("lru", "generations", "hitmap", "reader-aware", "reader-aware-auto",
        "belady");
    /**
     * References run only when asked for: {@code zipf-oracle} ({@link ZipfOracleCache}, the zipf
     * workload only) knows every segment's true popularity and the sessions' distributions, not
     * the sessions themselves; {@code s3-fifo} ({@link S3FifoCache}) and {@code sieve}
     * ({@link SieveCache}), references for the key/value traces, use the whole capacity like LRU.
     */
    public static final List<String> EXTRA_POLICIES = List.of("zipf-oracle", "s3-fifo", "sieve");
    /** Default target utilization: the cache manager's. */
    public static final double TARGET_UTILIZATION_DEFAULT = CacheManager.Builder.TARGET_UTILIZATION_DEFAULT;
    /** Default generations per cache size: a generation every capacity / this many accesses. */
    public static final int GENERATIONS_PER_CAPACITY_DEFAULT = 16;
    /**
     * Default idle timeout of the reader-aware policy, in accesses (the simulator's clock): a
     * reader that neither reads nor moves for this long stops protecting anything.
     */
    public static final long IDLE_TIMEOUT_DEFAULT = 65_536;

    private final double targetUtilization;
    private final int generationsPerCapacity;
    private final long idleTimeout;
    /** Whether the reader-aware policy's fill admission is on (off by default, as in the policy). */
    private boolean fillAdmission;

    public Simulator(final double targetUtilization, final int generationsPerCapacity) {
        this(targetUtilization, generationsPerCapacity, IDLE_TIMEOUT_DEFAULT);
    }

    /**
     * @param idleTimeout the reader-aware policy's idle timeout, in accesses, &gt;= 1.
     */
    /** Turns the reader-aware policy's fill admission on ({@code ReaderAwarePolicy.admitFills}); before any run. */
    public Simulator fillAdmission(final boolean on) {
        fillAdmission = on;
        return this;
    }

    public Simulator(final double targetUtilization, final int generationsPerCapacity, final long idleTimeout) {
        if (!(targetUtilization > 0.0 && targetUtilization <= 1.0)) {
            throw new IllegalArgumentException("targetUtilization=" + targetUtilization + " must be in (0, 1]");
        }
        if (generationsPerCapacity < 1) {
            throw new IllegalArgumentException("generationsPerCapacity=" + generationsPerCapacity + " must be >= 1");
        }
        if (idleTimeout < 1) {
            throw new IllegalArgumentException("idleTimeout=" + idleTimeout + " must be >= 1");
        }
        this.targetUtilization = targetUtilization;
        this.generationsPerCapacity = generationsPerCapacity;
        this.idleTimeout = idleTimeout;
    }

    public Simulator() {
        this(TARGET_UTILIZATION_DEFAULT, GENERATIONS_PER_CAPACITY_DEFAULT);
    }

    /**
     * The outcome of one run; {@code classReads} and {@code classHits} by reader class
     * ({@link Trace#CLASS_NAMES}).
     */
    public record Result(String workload, String policy, long cacheBlocks, long reads, long hits, long failedInserts,
                         long[] classReads, long[] classHits) {
        public Result(final String workload, final String policy, final long cacheBlocks, final long reads, final long hits,
                      final long failedInserts) {
            this(workload, policy, cacheBlocks, reads, hits, failedInserts, new long[Trace.CLASS_NAMES.size()],
                new long[Trace.CLASS_NAMES.size()]);
        }

        public double hitRatio() {
            return reads == 0 ? 0.0 : (double) hits / reads;
        }

        /** @return the hit ratio of one reader class's reads, or NaN if it read nothing. */
        public double hitRatio(final int readerClass) {
            return classReads[readerClass] == 0 ? Double.NaN : (double) classHits[readerClass] / classReads[readerClass];
        }
    }

    /**
     * @param nextUses the trace's {@code nextUses()} (only for "belady"; computed if null).
     */
    public Result run(final Trace trace, final String policy, final long cacheBlocks, final int[] nextUses) {
        if (cacheBlocks < 1) {
            throw new IllegalArgumentException("cacheBlocks=" + cacheBlocks + " must be >= 1");
        }
        final SimCache cache = newCache(trace, policy, cacheBlocks, nextUses);
        long reads = 0;
        long hits = 0;
        final long[] classReads = new long[Trace.CLASS_NAMES.size()];
        final long[] classHits = new long[Trace.CLASS_NAMES.size()];
        final int n = trace.size();
        for (int i = 0; i < n; i++) {
            switch (trace.type(i)) {
                case Trace.CREATE -> cache.create(trace, i);
                case Trace.APPEND -> cache.access(trace, i);
                case Trace.READ -> {
                    reads++;
                    final int c = trace.readClass(i);
                    classReads[c]++;
                    if (cache.access(trace, i)) {
                        hits++;
                        classHits[c]++;
                    }
                }
                case Trace.OPEN_READER, Trace.CLOSE_READER -> cache.reader(trace, i);
                case Trace.DELETE -> cache.delete(trace, i);
                default -> throw new IllegalStateException("event type " + trace.type(i));
            }
            if (cache.used() > cacheBlocks) {
                throw new IllegalStateException(policy + " holds " + cache.used() + " blocks > " + cacheBlocks + " at event " + i);
            }
        }
        return new Result(trace.name(), policy, cacheBlocks, reads, hits, cache.failedInserts(), classReads, classHits);
    }

    private SimCache newCache(final Trace trace, final String policy, final long cacheBlocks, final int[] nextUses) {
        final long period = Math.max(1, cacheBlocks / generationsPerCapacity);
        return switch (policy) {
            case "lru" -> new LruCache(trace, cacheBlocks);
            case "s3-fifo" -> new S3FifoCache(trace, cacheBlocks);
            case "sieve" -> new SieveCache(trace, cacheBlocks);
            case "zipf-oracle" -> new ZipfOracleCache(trace, cacheBlocks);
            case "belady" -> new BeladyCache(trace, nextUses != null ? nextUses : trace.nextUses(), cacheBlocks);
            case "generations" -> new PolicyCache(trace, new GenerationPolicy(), cacheBlocks, targetUtilization, period);
            case "reader-aware", "reader-aware-auto" -> {
                // The policy's clock is the simulator's: one tick per access.
                final PolicyCache.Clock clock = new PolicyCache.Clock();
                final ReaderAwarePolicy readerAware = new ReaderAwarePolicy(ReaderAwarePolicy.REREAD_GENERATIONS_DEFAULT,
                    ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT, idleTimeout, clock).admitFills(fillAdmission);
                yield new PolicyCache(trace, readerAware, cacheBlocks, targetUtilization, period, clock,
                    policy.equals("reader-aware-auto"));
            }
            case "hitmap" -> new PolicyCache(trace, HitmapPolicy.forEntries(cacheBlocks), cacheBlocks, targetUtilization, period);
            default -> throw new IllegalArgumentException("unknown policy=" + policy + " (expected one of " + POLICIES + ")");
        };
    }
}
