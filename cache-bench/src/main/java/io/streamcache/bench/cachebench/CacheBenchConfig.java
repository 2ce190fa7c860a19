package io.streamcache.bench.cachebench;

import java.time.Duration;
import java.util.Locale;

/**
 * The immutable settings of one {@link CacheBench} run, parsed from command-line flags: safe to
 * share between threads once built.
 *
 * <p>A {@code --preset} sets defaults first; every other flag then overrides it, whatever the
 * order on the command line. {@code --duration} and {@code --ops} exclude each other; one given
 * on the command line replaces the other coming from a preset.
 */
public final class CacheBenchConfig {
    /** Default number of worker threads. */
    public static final int THREADS_DEFAULT = 4;
    /** Default cache capacity: 256 MB. */
    public static final long CACHE_SIZE_DEFAULT = 256L << 20;
    /** Default key range. */
    public static final int KEY_RANGE_DEFAULT = 16_384;
    /** Default run time when neither {@code --duration} nor {@code --ops} is given. */
    public static final Duration DURATION_DEFAULT = Duration.ofSeconds(10);
    /** Largest entry size accepted for {@code --entry-size}: 16 MB. */
    public static final int MAX_ENTRY_SIZE = 16 << 20;
    /** An entry grown by appends past this many times the largest entry size is rolled (replaced). */
    public static final int APPEND_ROLL_FACTOR = 8;
    /** ... but an entry may always grow to 1 MB, or to the largest entry size if that is larger. */
    public static final int APPEND_ROLL_LENGTH_CAP = 1 << 20;

    /** The named workloads. */
    public enum Preset {
        /** Pravega's sequential raw test: insert N x 10 KB, get N, delete N; N scaled to the cache. */
        PRAVEGA_SEQUENTIAL("pravega-sequential"),
        /** Pravega's random raw test, 10 KB: 60% insert / 40% delete, each op also reads a random entry. */
        PRAVEGA_RANDOM("pravega-random"),
        /** Pravega's random raw test with 100 KB entries. */
        PRAVEGA_RANDOM_100K("pravega-random-100k"),
        /** RocksDB cache_bench, 100% insert, 16 threads. */
        ROCKSDB_INSERT("rocksdb-insert"),
        /** RocksDB cache_bench, 80% lookup / 20% insert, 16 threads. */
        ROCKSDB_LOOKUP80("rocksdb-lookup80");

        private final String flagName;

        Preset(final String flagName) {
            this.flagName = flagName;
        }

        public String flagName() {
            return flagName;
        }

        static Preset parse(final String value) {
            for (final Preset p : values()) {
                if (p.flagName.equals(value)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("unknown preset=" + value + " (expected one of: " + names() + ")");
        }

        static String names() {
            final StringBuilder sb = new StringBuilder();
            for (final Preset p : values()) {
                sb.append(sb.length() == 0 ? "" : ", ").append(p.flagName);
            }
            return sb.toString();
        }
    }

    static final String USAGE = String.join(System.lineSeparator(),
        "usage: java -XX:MaxDirectMemorySize=4g -jar streamcache-bench.jar cachebench [flags]",
        "",
        "A cache_bench for the block cache alone (after RocksDB's cache_bench). Each thread owns the",
        "keys k with k % threads == its index, so operations on one entry are serialized without locks.",
        "",
        "  --threads N            worker threads (default " + THREADS_DEFAULT + ")",
        "  --lookup-percent P     copy a random key's entry into a thread-local buffer (miss if absent)",
        "  --insert-percent P     insert a new entry for a random key (delete, then insert, if present)",
        "  --append-percent P     append to a random key's entry (insert if absent; an entry that would",
        "                         pass max(B, min(" + APPEND_ROLL_FACTOR + " x B, 1 MB)) is rolled: deleted, then inserted)",
        "  --delete-percent P     delete a random key's entry if present",
        "                         (the four must sum to 100; default 50/25/15/10)",
        "  --entry-size S|A-B     bytes per insert or append, fixed or uniform in [A,B] (default 1k-16k)",
        "  --cache-size S         cache capacity, e.g. 64m, 1g (default 256m); needs -XX:MaxDirectMemorySize",
        "  --key-range N          keys 0..N-1, N >= threads (default " + KEY_RANGE_DEFAULT + ")",
        "  --duration D           run time, e.g. 500ms, 10s, 1m (default 10s)",
        "  --ops N                total operations instead of a duration (split over threads)",
        "  --read-each-op         every operation is followed by a lookup of another random key",
        "  --seed N               random seed (default 1)",
        "  --preset NAME          " + Preset.names(),
        "                         pravega-sequential: 1 thread, insert N x 10 KB, get N, delete N; N = --ops or",
        "                           what fits in 90% of the cache (at most 1,000,000); --duration is ignored",
        "                         pravega-random[-100k]: 60% insert / 40% delete + a read each op, 10 KB (100 KB),",
        "                           1,000,000 ops, key range sized to the cache",
        "                         rocksdb-insert: 16 threads, 100% insert; rocksdb-lookup80: 80% lookup / 20% insert",
        "  --help                 this text",
        "",
        "A full cache fails the operation with CacheFullException: it is counted ('full'), not retried,",
        "and nothing is evicted (the cache's full handler is NONE). Exit codes: 0 done, 1 failed, 2 bad flags.");

    final Preset preset;
    final int threads;
    final int lookupPercent;
    final int insertPercent;
    final int appendPercent;
    final int deletePercent;
    final int entrySizeMin;
    final int entrySizeMax;
    final long cacheSize;
    final int keyRange;
    final Duration duration;
    final long ops;
    final boolean readEachOp;
    final long seed;

    private CacheBenchConfig(final Builder b) {
        preset = b.preset;
        threads = b.threads;
        lookupPercent = b.lookupPercent;
        insertPercent = b.insertPercent;
        appendPercent = b.appendPercent;
        deletePercent = b.deletePercent;
        entrySizeMin = b.entrySizeMin;
        entrySizeMax = b.entrySizeMax;
        cacheSize = b.cacheSize;
        keyRange = b.keyRange;
        duration = b.duration;
        ops = b.ops;
        readEachOp = b.readEachOp;
        seed = b.seed;
    }

    /** @return the longest an entry may grow by appends before it is rolled (deleted, then inserted). */
    int rollLength() {
        return Math.max(entrySizeMax, (int) Math.min((long) APPEND_ROLL_FACTOR * entrySizeMax, APPEND_ROLL_LENGTH_CAP));
    }

    /** @return the preset, or {@code null} for a custom mix. */
    public Preset preset() {
        return preset;
    }

    public int threads() {
        return threads;
    }

    public int keyRange() {
        return keyRange;
    }

    public long cacheSize() {
        return cacheSize;
    }

    /** @return total operations to run, or 0 when the run is timed by {@link #duration()}. */
    public long ops() {
        return ops;
    }

    /** @return the run time, or {@code null} when the run counts {@link #ops()}. */
    public Duration duration() {
        return duration;
    }

    /** @return whether {@code args} asks for the usage text. */
    static boolean wantsHelp(final String[] args) {
        for (final String a : args) {
            if ("--help".equals(a) || "-h".equals(a)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @throws IllegalArgumentException with a {@code name=value} message for any bad flag.
     */
    public static CacheBenchConfig parse(final String[] args) {
        final Builder b = new Builder();
        // The preset first, so that the other flags override it whatever their order.
        for (int i = 0; i < args.length; i++) {
            if ("--preset".equals(args[i])) {
                b.applyPreset(Preset.parse(value(args, i)));
            }
        }
        boolean durationGiven = false;
        boolean opsGiven = false;
        boolean mixGiven = false;
        for (int i = 0; i < args.length; i++) {
            final String flag = args[i];
            if (!flag.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument=" + flag);
            }
            final String name = flag.substring(2);
            if ("read-each-op".equals(name)) {
                b.readEachOp = true;
                continue;
            }
            final String value = value(args, i);
            i++;
            switch (name) {
                case "preset": break;
                case "threads": b.threads = (int) parseLong(name, value, 1, 1024); break;
                case "lookup-percent": b.lookupPercent = (int) parseLong(name, value, 0, 100); mixGiven = true; break;
                case "insert-percent": b.insertPercent = (int) parseLong(name, value, 0, 100); mixGiven = true; break;
                case "append-percent": b.appendPercent = (int) parseLong(name, value, 0, 100); mixGiven = true; break;
                case "delete-percent": b.deletePercent = (int) parseLong(name, value, 0, 100); mixGiven = true; break;
                case "entry-size": parseEntrySize(b, value); break;
                case "cache-size": b.cacheSize = parseSize(name, value, 4L << 20, 1L << 40); break;
                case "key-range": b.keyRange = (int) parseLong(name, value, 1, 1L << 30); b.keyRangeFromCache = false; break;
                case "duration": b.duration = parseDuration(value); durationGiven = true; break;
                case "ops": b.ops = parseLong(name, value, 1, Long.MAX_VALUE / 2); opsGiven = true; break;
                case "seed": b.seed = parseLong(name, value, Long.MIN_VALUE, Long.MAX_VALUE); break;
                default: throw new IllegalArgumentException("unknown flag=--" + name + " (see --help)");
            }
        }
        if (durationGiven && opsGiven) {
            throw new IllegalArgumentException("give --duration or --ops, not both: duration=" + b.duration + " ops=" + b.ops);
        }
        if (durationGiven) {
            b.ops = 0;
        } else if (opsGiven) {
            b.duration = null;
        } else if (b.duration == null && b.ops == 0) {
            b.duration = DURATION_DEFAULT;
        }
        if (mixGiven && b.preset == Preset.PRAVEGA_SEQUENTIAL) {
            throw new IllegalArgumentException("preset=" + b.preset.flagName + " has fixed phases; it takes no --*-percent flags");
        }
        final int sum = b.lookupPercent + b.insertPercent + b.appendPercent + b.deletePercent;
        if (sum != 100) {
            throw new IllegalArgumentException("percentages must sum to 100: lookup=" + b.lookupPercent + " insert="
                + b.insertPercent + " append=" + b.appendPercent + " delete=" + b.deletePercent + " sum=" + sum);
        }
        if (b.keyRange < b.threads) {
            throw new IllegalArgumentException("key-range must be >= threads (each thread owns its keys): key-range="
                + b.keyRange + " threads=" + b.threads);
        }
        if (b.preset == Preset.PRAVEGA_SEQUENTIAL && b.threads != 1) {
            throw new IllegalArgumentException("preset=pravega-sequential runs on one thread: threads=" + b.threads);
        }
        if (b.keyRangeFromCache) {
            b.keyRange = Math.max(b.threads, keysFitting(b.cacheSize, b.entrySizeMax, 9, 10));
        }
        return new CacheBenchConfig(b);
    }

    /** @return how many entries of {@code entrySize} bytes (whole 4 KB blocks) fill num/den of the cache. */
    static int keysFitting(final long cacheSize, final int entrySize, final int num, final int den) {
        final long blocks = (entrySize + 4095L) / 4096L;
        final long dataBlocks = cacheSize / 4096L * 511L / 512L;
        return (int) Math.min(1L << 30, Math.max(1L, dataBlocks * num / den / blocks));
    }

    private static String value(final String[] args, final int i) {
        if (i + 1 >= args.length) {
            throw new IllegalArgumentException("missing value for flag=" + args[i]);
        }
        return args[i + 1];
    }

    private static void parseEntrySize(final Builder b, final String value) {
        final int dash = value.indexOf('-', 1);
        if (dash < 0) {
            b.entrySizeMin = (int) parseSize("entry-size", value, 1, MAX_ENTRY_SIZE);
            b.entrySizeMax = b.entrySizeMin;
        } else {
            b.entrySizeMin = (int) parseSize("entry-size", value.substring(0, dash), 1, MAX_ENTRY_SIZE);
            b.entrySizeMax = (int) parseSize("entry-size", value.substring(dash + 1), 1, MAX_ENTRY_SIZE);
            if (b.entrySizeMin > b.entrySizeMax) {
                throw new IllegalArgumentException("entry-size range is reversed: entry-size=" + value);
            }
        }
    }

    static long parseLong(final String name, final String value, final long min, final long max) {
        final long v;
        try {
            v = Long.parseLong(value.replace("_", "").replace(",", ""));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("not a number: " + name + "=" + value, e);
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException("out of range [" + min + ", " + max + "]: " + name + "=" + value);
        }
        return v;
    }

    static long parseSize(final String name, final String value, final long min, final long max) {
        final String s = value.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        String digits = s.endsWith("b") ? s.substring(0, s.length() - 1) : s;
        if (digits.endsWith("k")) {
            unit = 1L << 10;
        } else if (digits.endsWith("m")) {
            unit = 1L << 20;
        } else if (digits.endsWith("g")) {
            unit = 1L << 30;
        }
        if (unit != 1) {
            digits = digits.substring(0, digits.length() - 1);
        }
        final long v = parseLong(name, digits, 0, Long.MAX_VALUE / unit);
        final long bytes = v * unit;
        if (bytes < min || bytes > max) {
            throw new IllegalArgumentException("out of range [" + min + ", " + max + "] bytes: " + name + "=" + value);
        }
        return bytes;
    }

    static Duration parseDuration(final String value) {
        final String s = value.trim().toLowerCase(Locale.ROOT);
        final Duration d;
        if (s.endsWith("ms")) {
            d = Duration.ofMillis(parseLong("duration", s.substring(0, s.length() - 2), 1, Long.MAX_VALUE / 2));
        } else if (s.endsWith("s")) {
            d = Duration.ofSeconds(parseLong("duration", s.substring(0, s.length() - 1), 1, 1L << 30));
        } else if (s.endsWith("m")) {
            d = Duration.ofMinutes(parseLong("duration", s.substring(0, s.length() - 1), 1, 1L << 20));
        } else {
            throw new IllegalArgumentException("duration needs a unit (ms, s, m): duration=" + value);
        }
        return d;
    }

    /** @return a one-line description of the settings. */
    String describe() {
        if (preset == Preset.PRAVEGA_SEQUENTIAL) {
            return "preset=" + preset.flagName + " threads=1 phases: insert N, lookup N, delete N entry-size=" + entrySizeMax
                + " cache-size=" + (cacheSize >> 20) + "MB" + (ops > 0 ? " ops=" + ops : "") + " seed=" + seed;
        }
        return "preset=" + (preset == null ? "none" : preset.flagName) + " threads=" + threads
            + " mix: lookup=" + lookupPercent + "% insert=" + insertPercent + "% append=" + appendPercent
            + "% delete=" + deletePercent + "%" + (readEachOp ? " +read-each-op" : "")
            + " entry-size=" + (entrySizeMin == entrySizeMax ? String.valueOf(entrySizeMin) : entrySizeMin + "-" + entrySizeMax)
            + " cache-size=" + (cacheSize >> 20) + "MB key-range=" + keyRange
            + (ops > 0 ? " ops=" + ops : " duration=" + duration.toMillis() + "ms") + " seed=" + seed;
    }

    private static final class Builder {
        Preset preset;
        int threads = THREADS_DEFAULT;
        int lookupPercent = 50;
        int insertPercent = 25;
        int appendPercent = 15;
        int deletePercent = 10;
        int entrySizeMin = 1 << 10;
        int entrySizeMax = 16 << 10;
        long cacheSize = CACHE_SIZE_DEFAULT;
        int keyRange = KEY_RANGE_DEFAULT;
        boolean keyRangeFromCache;
        Duration duration;
        long ops;
        boolean readEachOp;
        long seed = 1;

        void applyPreset(final Preset p) {
            preset = p;
            switch (p) {
                case PRAVEGA_SEQUENTIAL:
                    threads = 1;
                    mix(0, 100, 0, 0);
                    entrySizeMin = entrySizeMax = 10 << 10;
                    // ops 0 and no duration: N is what fits in the cache (see CacheBench).
                    duration = Duration.ZERO;
                    break;
                case PRAVEGA_RANDOM:
                case PRAVEGA_RANDOM_100K:
                    threads = 1;
                    mix(0, 60, 0, 40);
                    readEachOp = true;
                    entrySizeMin = entrySizeMax = p == Preset.PRAVEGA_RANDOM ? 10 << 10 : 100 << 10;
                    ops = 1_000_000;
                    keyRangeFromCache = true;
                    break;
                case ROCKSDB_INSERT:
                    threads = 16;
                    mix(0, 100, 0, 0);
                    entrySizeMin = entrySizeMax = 1 << 10;
                    break;
                case ROCKSDB_LOOKUP80:
                    threads = 16;
                    mix(80, 20, 0, 0);
                    entrySizeMin = entrySizeMax = 1 << 10;
                    break;
                default:
                    throw new IllegalStateException("preset=" + p);
            }
        }

        private void mix(final int lookup, final int insert, final int append, final int delete) {
            lookupPercent = lookup;
            insertPercent = insert;
            appendPercent = append;
            deletePercent = delete;
        }
    }
}
