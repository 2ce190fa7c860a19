package io.streamcache.bench.stress;

import io.streamcache.log.LogConfig;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * The settings of one stress run, parsed from command-line flags and validated; an immutable
 * value, safe to share between threads once built.
 *
 * <p>Flags follow Pravega's self-tester: producers, producer parallelism, segments, write size,
 * duration or operation count, tail and catch-up readers, plus the cache and log settings of
 * the embedded store. Every flag is {@code --name value} or {@code --name=value}.
 */
public final class StressConfig {
    /** Default cache capacity: 256 MiB, well inside the 4 GiB direct-memory limit of {@code ./bin/run}. */
    public static final long CACHE_SIZE_DEFAULT = 256L << 20;
    /** Default run length. */
    public static final Duration DURATION_DEFAULT = Duration.ofSeconds(60);
    /** Largest write size accepted by the flags; the log's own limit is checked when the store is built. */
    public static final int MAX_WRITE_SIZE = 1 << 20;

    /** Durability policies by flag value. */
    public enum Durability {
        EVERY_BATCH("every-batch"),
        INTERVAL("interval"),
        NEVER("never");

        private final String flag;

        Durability(final String flag) {
            this.flag = flag;
        }

        public String flag() {
            return flag;
        }

        static Durability parse(final String value) {
            for (final Durability d : values()) {
                if (d.flag.equals(value)) {
                    return d;
                }
            }
            throw new IllegalArgumentException("--durability=" + value + " must be one of every-batch, interval, never");
        }
    }

    /** Eviction policies of the store's cache manager, by flag value. */
    public enum Policy {
        /** The cache manager's default: oldest generation first ({@code GenerationPolicy}). */
        GENERATIONS("generations"),
        /** {@code ReaderAwarePolicy}: the harness's readers register their positions with it. */
        READER_AWARE("reader-aware"),
        /** {@code HitmapPolicy}, sized for the cache, with its updater thread running for the run. */
        HITMAP("hitmap");

        private final String flag;

        Policy(final String flag) {
            this.flag = flag;
        }

        public String flag() {
            return flag;
        }

        static Policy parse(final String value) {
            for (final Policy p : values()) {
                if (p.flag.equals(value)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("--policy=" + value + " must be one of generations, reader-aware, hitmap");
        }
    }

    static final String USAGE = String.join(System.lineSeparator(),
        "usage: streamcache-bench.jar stress [flags]",
        "",
        "Drives an embedded segment store (block cache + durable log) with producers and readers,",
        "verifies every byte read and writes summary.json and report.html.",
        "",
        "  --producers N        producer threads (default 2)",
        "  --parallelism N      appends in flight per producer (default 32)",
        "  --segments N         segments, shared by the producers (default 16)",
        "  --write-size N|A-B   bytes per append, fixed or uniform in [A, B] (default 100-8192; max 1048576)",
        "  --duration D         run time: 60s, 2m, 500ms, or plain seconds (default 60s)",
        "  --ops N              stop after N appends instead (whichever of --duration / --ops is given)",
        "  --tail-readers N     readers following the tails (default 2)",
        "  --catchup-readers N  readers reading segments from the start, behind the tail (default 1)",
        "  --catchup-share F    catch-up readers wait so that catch-up reads are about this share of all",
        "                       reads, in (0, 0.95] (default: off, they read as fast as they can)",
        "  --catchup-read-size S  most bytes one catch-up read asks for: 64k, 1m (default 1m)",
        "  --cache-size S       cache capacity: 256m, 1g, or bytes (default 256m)",
        "  --durability P       every-batch | interval | never (default every-batch)",
        "  --policy P           eviction policy of the cache manager: generations | reader-aware | hitmap",
        "                       (default generations); with reader-aware every tail and catch-up reader",
        "                       registers its position in each segment it reads",
        "  --dir PATH           log directory (default: a temporary directory, deleted at the end)",
        "  --out PATH           results folder (default ./stress-results/<timestamp>)",
        "  --seed N             seed of the record contents (default 1)",
        "  --retention S        log bytes kept behind the tails, all segments together: older bytes are",
        "                       truncated, as a broker's retention would, never past a tail reader;",
        "                       256m, 4g, or off (default: twice the cache size)",
        "  --log-file-size S    length of each log file: 64m (the default), 4m or more, a multiple of 4k",
        "  --prefill [off|full] before measuring, append without readers until the cache is full",
        "                       (its eviction target reached); the clock starts after (default off)",
        "  --restart-at D       restart the store at D into the run: producers and readers",
        "                       stop, the store and cache close cleanly and reopen, the readers resume",
        "                       --restart-rewind bytes behind each tail (the tail that was just in the",
        "                       cache), and the hit ratio of the first minute after it is printed",
        "                       (with --policy generations or reader-aware)",
        "  --restart warm|cold  warm: the cache reopens from its region and warm catalog; cold: the",
        "                       region file and catalog are removed first (default warm)",
        "  --region PATH        the cache's region: a persistent mapped file (default with --restart-at:",
        "                       a file in /dev/shm, or the temporary directory; else direct memory)",
        "  --restart-rewind S   bytes behind each segment's tail the readers resume at (default: the",
        "                       cache size over the segments)",
        "  --scenario S         a disturbance in the middle of the run, between --disturb-at and its end:",
        "                       catchup-storm (--storm-readers readers read segments from their start with",
        "                       readAsync, through the log), slow-consumer (a consumer reads and holds its",
        "                       results unreleased, up to --slow-hold bytes), or both, comma-separated;",
        "                       the results are split into the phases before, during and after it",
        "  --disturb-at D       when the disturbance starts (default: a third into --duration)",
        "  --disturb-for D      how long it lasts (default: a third of --duration)",
        "  --storm-readers N    catch-up storm readers (default 4)",
        "  --storm-read-size S  most bytes one storm read asks for (default 1m)",
        "  --storm-rate R       MB/s (10^6 bytes) the storm readers read at most, all together (default: off,",
        "                       as fast as they can; on a machine of few cores the storm's own CPU then",
        "                       competes with the producers)",
        "  --slow-hold S        bytes of results the slow consumer holds unreleased (default: the cache size)",
        "  --slow-budget B      own: the slow consumer passes its own waiting read budget of --slow-hold bytes",
        "                       with every read (the default); fail-fast: the same, failing at once when",
        "                       spent; store: none, only the store's budget holds it",
        "  --read-budget S      the store's read budget: bytes unreleased asynchronous results may pin",
        "                       (default: the store's, a quarter of the cache)",
        "  --slow-from W        start: the slow consumer reads segments from their start, through the log",
        "                       (the default); tail: it follows the tails, pinning cached bytes",
        "  --thread-dump        with --scenario: write every thread's stack and locks (as jstack -l does) to",
        "                       threads-during.txt in the results, halfway through the disturbance",
        "  --compare            run the same flags with the disturbance off first (the baseline), then on,",
        "                       and report the isolation targets as ratios of the two runs' phases",
        "  --rounds N           with --compare: baseline and scenario runs alternate N times (default 1);",
        "                       the targets use the median ratio",
        "  --help               this text",
        "",
        "Exit code: 0 if every byte read verified, 1 on a mismatch or failure, 2 on bad flags.");

    final int producers;
    final int parallelism;
    final int segments;
    final int minWriteSize;
    final int maxWriteSize;
    final Duration duration;
    final long ops;
    final int tailReaders;
    final int catchupReaders;
    /** Share of all reads the catch-up reads are held to; 0: off. */
    final double catchupShare;
    /** Most bytes one catch-up read asks for. */
    final int catchupReadSize;
    final long cacheSize;
    final Durability durability;
    final Policy policy;
    final Path dir;
    final Path out;
    final long seed;
    final boolean help;
    /** Log bytes kept behind the tails over all segments; 0: no truncation. */
    final long retention;
    final boolean prefill;
    final long logFileSize;
    /** When to restart the store, or null for no restart. */
    final Duration restartAt;
    /** Whether the restart is warm (the cache reopens from its region) or cold. */
    final boolean restartWarm;
    /** The persistent mapped-file region of the cache, or null for direct memory. */
    final Path region;
    /** Bytes behind each tail the readers resume at after the restart. */
    final long restartRewind;
    /** Whether a catch-up storm runs in the disturbance phase. */
    final boolean storm;
    /** Whether a slow consumer holds results in the disturbance phase. */
    final boolean slowConsumer;
    /** When the disturbance phase starts and how long it lasts; null without {@code --scenario} or {@code --compare}. */
    final Duration disturbAt;
    final Duration disturbFor;
    final int stormReaders;
    final int stormReadSize;
    /** Most MB/s the storm reads, all readers together; 0: unpaced. */
    final double stormRate;
    /** Bytes of results the slow consumer holds unreleased. */
    final long slowHold;
    /** Whether the slow consumer follows the tails (pinning cached bytes) rather than reading from the start. */
    final boolean slowFromTail;
    /** The slow consumer's own read budget, by flag value. */
    enum SlowBudget {
        OWN("own"),
        FAIL_FAST("fail-fast"),
        STORE("store");

        private final String flag;

        SlowBudget(final String flag) {
            this.flag = flag;
        }

        public String flag() {
            return flag;
        }

        static SlowBudget parse(final String value) {
            for (final SlowBudget b : values()) {
                if (b.flag.equals(value)) {
                    return b;
                }
            }
            throw new IllegalArgumentException("--slow-budget=" + value + " must be one of own, fail-fast, store");
        }
    }

    final SlowBudget slowBudget;
    /** The store's read budget in bytes; 0: the store's default. */
    final long readBudget;
    /** Whether a thread dump is written halfway through the disturbance. */
    final boolean threadDump;
    /** Whether a baseline run (the disturbance off) precedes each scenario run. */
    final boolean compare;
    final int rounds;

    private StressConfig(final Builder b) {
        this.producers = b.producers;
        this.parallelism = b.parallelism;
        this.segments = b.segments;
        this.minWriteSize = b.minWriteSize;
        this.maxWriteSize = b.maxWriteSize;
        this.duration = b.duration;
        this.ops = b.ops;
        this.tailReaders = b.tailReaders;
        this.catchupReaders = b.catchupReaders;
        this.catchupShare = b.catchupShare;
        this.catchupReadSize = b.catchupReadSize;
        this.cacheSize = b.cacheSize;
        this.durability = b.durability;
        this.policy = b.policy;
        this.dir = b.dir;
        this.out = b.out;
        this.seed = b.seed;
        this.help = b.help;
        this.retention = b.retention;
        this.prefill = b.prefill;
        this.logFileSize = b.logFileSize;
        this.restartAt = b.restartAt;
        this.restartWarm = b.restartWarm;
        this.region = b.region;
        this.restartRewind = b.restartRewind;
        this.storm = b.storm;
        this.slowConsumer = b.slowConsumer;
        this.disturbAt = b.disturbAt;
        this.disturbFor = b.disturbFor;
        this.stormReaders = b.stormReaders;
        this.stormReadSize = b.stormReadSize;
        this.stormRate = b.stormRate;
        this.slowHold = b.slowHold;
        this.slowFromTail = b.slowFromTail;
        this.threadDump = b.threadDump;
        this.slowBudget = b.slowBudget;
        this.readBudget = b.readBudget;
        this.compare = b.compare;
        this.rounds = b.rounds;
    }

    /** @return whether the run is split into phases before, during and after a disturbance window. */
    boolean phased() {
        return disturbAt != null;
    }

    /** @return the scenario as given to {@code --scenario}: {@code none}, or its disturbances comma-separated. */
    String scenario() {
        if (!storm && !slowConsumer) {
            return "none";
        }
        return storm && slowConsumer ? "catchup-storm,slow-consumer" : storm ? "catchup-storm" : "slow-consumer";
    }

    /**
     * @return this configuration for one run of a {@code --compare}: the disturbance on or off
     *     (the baseline keeps the phases, so its windows line up with the scenario's), results in {@code out}.
     */
    StressConfig forRun(final boolean disturbed, final Path runOut) {
        final Builder b = toBuilder();
        b.storm = disturbed && storm;
        b.slowConsumer = disturbed && slowConsumer;
        b.compare = false;
        b.rounds = 1;
        b.out = runOut;
        return new StressConfig(b);
    }

    private Builder toBuilder() {
        final Builder b = new Builder();
        b.producers = producers;
        b.parallelism = parallelism;
        b.segments = segments;
        b.minWriteSize = minWriteSize;
        b.maxWriteSize = maxWriteSize;
        b.duration = duration;
        b.ops = ops;
        b.tailReaders = tailReaders;
        b.catchupReaders = catchupReaders;
        b.catchupShare = catchupShare;
        b.catchupReadSize = catchupReadSize;
        b.cacheSize = cacheSize;
        b.durability = durability;
        b.policy = policy;
        b.dir = dir;
        b.out = out;
        b.seed = seed;
        b.help = help;
        b.retention = retention;
        b.prefill = prefill;
        b.logFileSize = logFileSize;
        b.restartAt = restartAt;
        b.restartWarm = restartWarm;
        b.region = region;
        b.restartRewind = restartRewind;
        b.storm = storm;
        b.slowConsumer = slowConsumer;
        b.disturbAt = disturbAt;
        b.disturbFor = disturbFor;
        b.stormReaders = stormReaders;
        b.stormReadSize = stormReadSize;
        b.stormRate = stormRate;
        b.slowHold = slowHold;
        b.slowFromTail = slowFromTail;
        b.threadDump = threadDump;
        b.slowBudget = slowBudget;
        b.readBudget = readBudget;
        b.compare = compare;
        b.rounds = rounds;
        return b;
    }

    /**
     * @return the configuration the flags describe.
     * @throws IllegalArgumentException naming the flag, if a flag is unknown, lacks a value or is out of range.
     */
    public static StressConfig parse(final String[] args) {
        final Builder b = new Builder();
        boolean durationGiven = false;
        boolean retentionGiven = false;
        for (int i = 0; i < args.length; i++) {
            final String arg = args[i];
            if ("--help".equals(arg) || "-h".equals(arg)) {
                b.help = true;
                continue;
            }
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument: " + arg + " (flags start with --; see --help)");
            }
            final String name;
            final String value;
            final int eq = arg.indexOf('=');
            if ("--prefill".equals(arg) && (i + 1 >= args.length || args[i + 1].startsWith("--"))) {
                b.prefill = true;
                continue;
            }
            if ("--compare".equals(arg) && (i + 1 >= args.length || args[i + 1].startsWith("--"))) {
                b.compare = true;
                continue;
            }
            if ("--thread-dump".equals(arg) && (i + 1 >= args.length || args[i + 1].startsWith("--"))) {
                b.threadDump = true;
                continue;
            }
            if (eq >= 0) {
                name = arg.substring(2, eq);
                value = arg.substring(eq + 1);
            } else {
                name = arg.substring(2);
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--" + name + " needs a value (see --help)");
                }
                value = args[++i];
            }
            switch (name) {
                case "producers": b.producers = parseInt(name, value, 1, 1024); break;
                case "parallelism": b.parallelism = parseInt(name, value, 1, 65_536); break;
                case "segments": b.segments = parseInt(name, value, 1, 1_000_000); break;
                case "write-size": parseWriteSize(b, value); break;
                case "duration": b.duration = parseDuration(value); durationGiven = true; break;
                case "ops": b.ops = parseLong(name, value, 1, Long.MAX_VALUE); break;
                case "tail-readers": b.tailReaders = parseInt(name, value, 0, 1024); break;
                case "catchup-readers": b.catchupReaders = parseInt(name, value, 0, 1024); break;
                case "catchup-share": b.catchupShare = parseShare(name, value); break;
                case "catchup-read-size": b.catchupReadSize = (int) parseSize(name, value, 4096, 1L << 20); break;
                case "cache-size": b.cacheSize = parseSize(name, value, 4L << 20, 1L << 40); break;
                case "durability": b.durability = Durability.parse(value); break;
                case "policy": b.policy = Policy.parse(value); break;
                case "dir": b.dir = Path.of(value); break;
                case "out": b.out = Path.of(value); break;
                case "seed": b.seed = parseLong(name, value, Long.MIN_VALUE, Long.MAX_VALUE); break;
                case "retention":
                    b.retention = "off".equals(value) ? 0 : parseSize(name, value, 1L << 20, 1L << 50);
                    retentionGiven = true;
                    break;
                case "prefill": b.prefill = parsePrefill(value); break;
                case "log-file-size":
                    b.logFileSize = parseSize(name, value, 4L << 20, 1L << 40);
                    if (b.logFileSize % 4096 != 0) {
                        throw new IllegalArgumentException("--log-file-size=" + value + " must be a multiple of 4096");
                    }
                    break;
                case "restart-at": b.restartAt = parseDuration(value); break;
                case "restart":
                    if (!value.equals("warm") && !value.equals("cold")) {
                        throw new IllegalArgumentException("--restart=" + value + " must be warm or cold");
                    }
                    b.restartWarm = value.equals("warm");
                    break;
                case "region": b.region = Path.of(value); break;
                case "restart-rewind": b.restartRewind = parseSize(name, value, 0, 1L << 50); break;
                case "scenario": parseScenario(b, value); break;
                case "disturb-at": b.disturbAt = parseDuration(value); break;
                case "disturb-for": b.disturbFor = parseDuration(value); break;
                case "storm-readers": b.stormReaders = parseInt(name, value, 1, 1024); break;
                case "storm-rate": b.stormRate = parseRate(name, value); break;
                case "storm-read-size": b.stormReadSize = (int) parseSize(name, value, 4096, 1L << 20); break;
                case "slow-hold": b.slowHold = parseSize(name, value, 4096, 1L << 40); break;
                case "slow-from":
                    if (!value.equals("start") && !value.equals("tail")) {
                        throw new IllegalArgumentException("--slow-from=" + value + " must be start or tail");
                    }
                    b.slowFromTail = value.equals("tail");
                    break;
                case "slow-budget": b.slowBudget = SlowBudget.parse(value); break;
                case "read-budget": b.readBudget = parseSize(name, value, 4096, 1L << 40); break;
                case "thread-dump": b.threadDump = parseBoolean(name, value); break;
                case "compare": b.compare = parseBoolean(name, value); break;
                case "rounds": b.rounds = parseInt(name, value, 1, 100); break;
                default: throw new IllegalArgumentException("unknown flag: --" + name + " (see --help)");
            }
        }
        if (b.ops > 0 && durationGiven) {
            throw new IllegalArgumentException("give --duration or --ops, not both");
        }
        if (b.ops > 0) {
            b.duration = null;
        }
        if (!retentionGiven) {
            b.retention = 2 * b.cacheSize;
        }
        if (b.restartAt != null) {
            if (b.duration == null || b.restartAt.compareTo(b.duration) >= 0) {
                throw new IllegalArgumentException("--restart-at=" + b.restartAt.toMillis() + "ms must be inside --duration");
            }
            if (b.policy == Policy.HITMAP) {
                throw new IllegalArgumentException("--restart-at works with --policy generations or reader-aware");
            }
            if (b.region == null) {
                final Path shm = Path.of("/dev/shm");
                b.region = (java.nio.file.Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")))
                    .resolve("streamcache-stress-" + ProcessHandle.current().pid() + ".region");
            }
            if (b.restartRewind < 0) {
                b.restartRewind = b.cacheSize / b.segments;
            }
        }
        validateScenario(b);
        if (b.out == null) {
            b.out = Path.of("stress-results", LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)));
        }
        return new StressConfig(b);
    }

    private static double parseShare(final String name, final String value) {
        final double share;
        try {
            share = Double.parseDouble(value);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + "=" + value + " is not a number", e);
        }
        if (!(share > 0 && share <= 0.95)) {
            throw new IllegalArgumentException("--" + name + "=" + value + " must be in (0, 0.95]");
        }
        return share;
    }

    private static double parseRate(final String name, final String value) {
        final double rate;
        try {
            rate = Double.parseDouble(value);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + "=" + value + " is not a number (MB/s)", e);
        }
        if (!(rate > 0 && rate <= 1e6)) {
            throw new IllegalArgumentException("--" + name + "=" + value + " must be in (0, 1000000] MB/s");
        }
        return rate;
    }

    private static void parseScenario(final Builder b, final String value) {
        b.storm = false;
        b.slowConsumer = false;
        for (final String part : value.split(",", -1)) {
            switch (part.trim()) {
                case "catchup-storm": b.storm = true; break;
                case "slow-consumer": b.slowConsumer = true; break;
                case "none": break;
                default:
                    throw new IllegalArgumentException("--scenario=" + value
                        + " must be none, catchup-storm, slow-consumer or both comma-separated");
            }
        }
    }

    /** Checks the scenario flags against each other and the run's length; fills in the disturbance window's defaults. */
    private static void validateScenario(final Builder b) {
        final boolean disturbed = b.storm || b.slowConsumer;
        if (b.compare && !disturbed) {
            throw new IllegalArgumentException("--compare needs a --scenario to compare against its baseline");
        }
        if (b.rounds > 1 && !b.compare) {
            throw new IllegalArgumentException("--rounds needs --compare");
        }
        if (!disturbed) {
            if (b.disturbAt != null || b.disturbFor != null || b.threadDump) {
                throw new IllegalArgumentException("--disturb-at, --disturb-for and --thread-dump need a --scenario");
            }
            return;
        }
        if (b.duration == null) {
            throw new IllegalArgumentException("--scenario needs --duration (the phases are times), not --ops");
        }
        if (b.restartAt != null) {
            throw new IllegalArgumentException("--scenario and --restart-at cannot be combined");
        }
        if (b.compare && b.dir != null) {
            throw new IllegalArgumentException("--compare makes a fresh log per run in a temporary directory: leave out --dir");
        }
        if (b.disturbAt == null) {
            b.disturbAt = b.duration.dividedBy(3);
        }
        if (b.disturbFor == null) {
            b.disturbFor = b.duration.dividedBy(3);
        }
        if (b.disturbAt.plus(b.disturbFor).compareTo(b.duration) >= 0) {
            throw new IllegalArgumentException("--disturb-at=" + b.disturbAt.toMillis() + "ms plus --disturb-for="
                + b.disturbFor.toMillis() + "ms must end inside --duration=" + b.duration.toMillis() + "ms, to leave an after phase");
        }
        if (b.slowHold < 0) {
            b.slowHold = b.cacheSize;
        }
    }

    private static boolean parseBoolean(final String name, final String value) {
        switch (value) {
            case "on": case "true": return true;
            case "off": case "false": return false;
            default: throw new IllegalArgumentException("--" + name + "=" + value + " must be on or off");
        }
    }

    private static boolean parsePrefill(final String value) {
        switch (value) {
            case "full": case "on": case "true": return true;
            case "off": case "false": return false;
            default: throw new IllegalArgumentException("--prefill=" + value + " must be full or off");
        }
    }

    private static void parseWriteSize(final Builder b, final String value) {
        final int dash = value.indexOf('-');
        if (dash > 0) {
            b.minWriteSize = parseInt("write-size", value.substring(0, dash), 1, MAX_WRITE_SIZE);
            b.maxWriteSize = parseInt("write-size", value.substring(dash + 1), 1, MAX_WRITE_SIZE);
            if (b.minWriteSize > b.maxWriteSize) {
                throw new IllegalArgumentException("--write-size=" + value + ": the low end must not exceed the high end");
            }
        } else {
            b.minWriteSize = parseInt("write-size", value, 1, MAX_WRITE_SIZE);
            b.maxWriteSize = b.minWriteSize;
        }
    }

    static int parseInt(final String name, final String value, final int min, final int max) {
        return (int) parseLong(name, value, min, max);
    }

    static long parseLong(final String name, final String value, final long min, final long max) {
        final long parsed;
        try {
            parsed = Long.parseLong(value.replace("_", "").replace(",", ""));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + "=" + value + " is not an integer", e);
        }
        if (parsed < min || parsed > max) {
            throw new IllegalArgumentException("--" + name + "=" + value + " must be in [" + min + ", " + max + "]");
        }
        return parsed;
    }

    /** Parses {@code 256m}, {@code 1g}, {@code 512k} or plain bytes. */
    static long parseSize(final String name, final String value, final long min, final long max) {
        final String v = value.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        String digits = v;
        if (!v.isEmpty()) {
            final char last = v.charAt(v.length() - 1);
            final int shift = last == 'k' ? 10 : last == 'm' ? 20 : last == 'g' ? 30 : last == 't' ? 40 : -1;
            if (shift > 0) {
                unit = 1L << shift;
                digits = v.substring(0, v.length() - 1);
            }
        }
        final long n;
        try {
            n = Long.parseLong(digits);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + "=" + value + " is not a size (e.g. 256m, 1g, 1048576)", e);
        }
        if (n < 0 || n > max / unit || n * unit < min) {
            throw new IllegalArgumentException("--" + name + "=" + value + " must be in [" + min + ", " + max + "] bytes");
        }
        return n * unit;
    }

    /** Parses {@code 60s}, {@code 2m}, {@code 500ms}, {@code 1h} or plain seconds. */
    static Duration parseDuration(final String value) {
        final String v = value.trim().toLowerCase(Locale.ROOT);
        try {
            final Duration d;
            if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("h")) {
                d = Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
            } else {
                d = Duration.ofSeconds(Long.parseLong(v));
            }
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("--duration=" + value + " must be positive");
            }
            return d;
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("--duration=" + value + " is not a duration (e.g. 60s, 2m, 500ms)", e);
        }
    }

    /** @return the flags as they would be given, for the summary. */
    @Override
    public String toString() {
        return "producers=" + producers + " parallelism=" + parallelism + " segments=" + segments
            + " writeSize=" + (minWriteSize == maxWriteSize ? String.valueOf(minWriteSize) : minWriteSize + "-" + maxWriteSize)
            + (duration != null ? " duration=" + duration.toMillis() + "ms" : " ops=" + ops)
            + " tailReaders=" + tailReaders + " catchupReaders=" + catchupReaders
            + (catchupShare > 0 ? " catchupShare=" + catchupShare : "") + " catchupReadSize=" + catchupReadSize + " cacheSize=" + cacheSize
            + " durability=" + durability.flag() + " policy=" + policy.flag()
            + " dir=" + (dir == null ? "<temp>" : dir) + " out=" + out + " seed=" + seed
            + " retention=" + (retention == 0 ? "off" : String.valueOf(retention)) + " prefill=" + (prefill ? "full" : "off")
            + " logFileSize=" + logFileSize
            + (restartAt != null ? " restartAt=" + restartAt.toMillis() + "ms restart=" + (restartWarm ? "warm" : "cold")
                + " restartRewind=" + restartRewind : "")
            + (region != null ? " region=" + region : "")
            + (phased() ? " scenario=" + scenario() + " disturbAt=" + disturbAt.toMillis() + "ms disturbFor=" + disturbFor.toMillis() + "ms"
                + (storm ? " stormReaders=" + stormReaders + " stormReadSize=" + stormReadSize
                    + (stormRate > 0 ? " stormRate=" + stormRate : "") : "")
                + (slowConsumer ? " slowHold=" + slowHold + " slowFrom=" + (slowFromTail ? "tail" : "start")
                    + " slowBudget=" + slowBudget.flag() : "") : "")
            + (readBudget > 0 ? " readBudget=" + readBudget : "")
            + (compare ? " compare rounds=" + rounds : "");
    }

    private static final class Builder {
        int producers = 2;
        int parallelism = 32;
        int segments = 16;
        int minWriteSize = 100;
        int maxWriteSize = 8192;
        Duration duration = DURATION_DEFAULT;
        long ops;
        int tailReaders = 2;
        int catchupReaders = 1;
        double catchupShare;
        int catchupReadSize = CatchUpReader.MAX_READ_LENGTH;
        long cacheSize = CACHE_SIZE_DEFAULT;
        Durability durability = Durability.EVERY_BATCH;
        Policy policy = Policy.GENERATIONS;
        Path dir;
        Path out;
        long seed = 1;
        boolean help;
        long retention;
        boolean prefill;
        long logFileSize = LogConfig.FILE_LENGTH_DEFAULT;
        Duration restartAt;
        boolean restartWarm = true;
        Path region;
        long restartRewind = -1;
        boolean storm;
        boolean slowConsumer;
        Duration disturbAt;
        Duration disturbFor;
        int stormReaders = 4;
        int stormReadSize = 1 << 20;
        double stormRate;
        long slowHold = -1;
        boolean slowFromTail;
        boolean threadDump;
        SlowBudget slowBudget = SlowBudget.OWN;
        long readBudget;
        boolean compare;
        int rounds = 1;
    }
}
