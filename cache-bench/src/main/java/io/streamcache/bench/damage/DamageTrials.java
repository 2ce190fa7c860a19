package io.streamcache.bench.damage;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.log.internal.CleanMark;
import io.streamcache.log.LogConfig;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.recovery.ScanningRecoveryHook;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * Damage trials on a durable log, not thread-safe (one run on one thread): builds a store of N
 * acknowledged appends, then for each trial copies its directory, damages one file (a flipped
 * bit, a zeroed 4 KB page, a truncation; at a uniform position over all files or in the last
 * 1 MiB of the last file), reopens it and judges the outcome:
 * <ul>
 *   <li>{@link Outcome#INTACT}: the open succeeded and every acknowledged byte reads back right;</li>
 *   <li>{@link Outcome#DETECTED}: the open failed with a {@link LogCorruptedException} naming the damaged file;</li>
 *   <li>{@link Outcome#TAIL_CUT}: only for a store that was not closed cleanly (no clean-close mark):
 *       the open succeeded and lost only bytes of the last batch (what a crash during an unforced
 *       write leaves is indistinguishable from damage there); reported by recovery at WARN;</li>
 *   <li>failures: {@link Outcome#SILENT_LOSS} (acknowledged bytes missing otherwise),
 *       {@link Outcome#WRONG_BYTES}, {@link Outcome#WRONG_FILE} (the error names another file),
 *       {@link Outcome#OTHER_ERROR}.</li>
 * </ul>
 * Half the trials (alternating) use the store as cleanly closed, half with its clean-close mark
 * deleted ("killed": recovered as after a crash).
 */
public final class DamageTrials {
    /** Kinds of damage. */
    public enum Kind { BIT_FLIP, ZERO_PAGE, TRUNCATE }

    /** Outcomes of a trial. */
    public enum Outcome {
        INTACT(false), DETECTED(false), TAIL_CUT(false), SILENT_LOSS(true), WRONG_BYTES(true), WRONG_FILE(true), OTHER_ERROR(true);

        final boolean failure;

        Outcome(final boolean failure) {
            this.failure = failure;
        }

        public boolean failure() {
            return failure;
        }
    }

    private static final int SEGMENTS = 4;
    private static final int PAGE = LogFileDescriptor.PAGE_LENGTH;
    private static final long TAIL_REGION = 1 << 20;

    private final Path work;
    private final long seed;
    private final int appends;
    private final long[] acknowledged = new long[SEGMENTS];
    private final Map<String, Map<Kind, Map<Outcome, Integer>>> counts = new TreeMap<>();
    private final List<String> failures = new ArrayList<>();
    private long batchWindow;

    /**
     * @param work    an empty directory for the store and the trial copies.
     * @param seed    the random seed (appends and damage).
     * @param appends acknowledged appends in the store.
     */
    public DamageTrials(final Path work, final long seed, final int appends) {
        this.work = work;
        this.seed = seed;
        this.appends = appends;
    }

    /**
     * Builds the store: {@code appends} appends of 1 to 2,000 bytes over four segments, pipelined
     * (many records per batch), all acknowledged, then a clean close.
     */
    public void build() throws IOException {
        final SplittableRandom random = new SplittableRandom(seed);
        final LogConfig config = logConfig(work.resolve("store"));
        batchWindow = ScanningRecoveryHook.tornWriteWindow(config);
        try (BlockCache cache = cache()) {
            final SegmentStore store = store(cache, config.directory());
            try {
                for (int s = 0; s < SEGMENTS; s++) {
                    store.create(name(s));
                }
                final List<CompletableFuture<Long>> pending = new ArrayList<>();
                for (int i = 0; i < appends; i++) {
                    final int s = random.nextInt(SEGMENTS);
                    final int length = 1 + random.nextInt(2000);
                    pending.add(store.appendAsync(name(s), Unpooled.wrappedBuffer(pattern(s, acknowledged[s], length))));
                    acknowledged[s] += length;
                    if (pending.size() == 256) {
                        pending.forEach(CompletableFuture::join);
                        pending.clear();
                    }
                }
                pending.forEach(CompletableFuture::join);
            } finally {
                store.close();
            }
        }
    }

    /**
     * Runs {@code trials} trials, numbered from {@code first}.
     */
    public void run(final int first, final int trials) throws IOException {
        final SplittableRandom random = new SplittableRandom(seed * 31 + first);
        for (int t = first; t < first + trials; t++) {
            final boolean killed = (t & 1) == 1;
            final Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
            final boolean nearTail = random.nextBoolean();
            final Path copy = work.resolve("trial-" + t);
            copy(work.resolve("store"), copy);
            if (killed) {
                Files.delete(copy.resolve(CleanMark.FILE_NAME));
            }
            final String damage = damage(copy, kind, nearTail, random);
            final long damagedFile = Long.parseLong(damage.substring(damage.indexOf("file=") + 5, damage.indexOf(' ')));
            final Outcome outcome = judge(copy, damagedFile, killed, damage);
            counts.computeIfAbsent((killed ? "killed" : "clean") + (nearTail ? " tail" : " uniform"), k -> new EnumMap<>(Kind.class))
                .computeIfAbsent(kind, k -> new EnumMap<>(Outcome.class)).merge(outcome, 1, Integer::sum);
            delete(copy);
        }
    }

    /**
     * @return counts by store state and region, then kind, then outcome.
     */
    public Map<String, Map<Kind, Map<Outcome, Integer>>> counts() {
        return counts;
    }

    /**
     * @return one line per failed trial.
     */
    public List<String> failures() {
        return failures;
    }

    /**
     * Prints the counts.
     */
    public void print(final PrintStream out) {
        out.printf("%-16s %-10s", "store region", "kind");
        for (final Outcome outcome : Outcome.values()) {
            out.printf(" %12s", outcome);
        }
        out.println();
        counts.forEach((group, byKind) -> byKind.forEach((kind, byOutcome) -> {
            out.printf("%-16s %-10s", group, kind);
            for (final Outcome outcome : Outcome.values()) {
                out.printf(" %12d", byOutcome.getOrDefault(outcome, 0));
            }
            out.println();
        }));
        failures.forEach(line -> out.println("FAILED " + line));
    }

    // ------------------------------------------------------------------------------------------

    private String damage(final Path directory, final Kind kind, final boolean nearTail, final SplittableRandom random) throws IOException {
        final List<Path> files = logFiles(directory);
        final Path file;
        long position;
        if (nearTail) {
            file = files.get(files.size() - 1);
            final long end = dataEnd(file);
            position = Math.max(PAGE, end - TAIL_REGION) + random.nextLong(Math.max(1, Math.min(TAIL_REGION, end - PAGE)));
        } else {
            long total = 0;
            final long[] ends = new long[files.size()];
            for (int i = 0; i < files.size(); i++) {
                ends[i] = dataEnd(files.get(i));
                total += ends[i];
            }
            long at = random.nextLong(total);
            int i = 0;
            while (at >= ends[i]) {
                at -= ends[i++];
            }
            file = files.get(i);
            position = at;
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            switch (kind) {
                case BIT_FLIP -> {
                    final ByteBuffer one = ByteBuffer.allocate(1);
                    channel.read(one, position);
                    one.put(0, (byte) (one.get(0) ^ (1 << random.nextInt(8)))).rewind();
                    channel.write(one, position);
                }
                case ZERO_PAGE -> {
                    position &= -(long) PAGE;
                    final ByteBuffer zeros = ByteBuffer.allocate(PAGE);
                    while (zeros.hasRemaining()) {
                        channel.write(zeros, position + zeros.position());
                    }
                }
                case TRUNCATE -> channel.truncate(position);
            }
        }
        return "file=" + LogFileDescriptor.fileNumber(file.getFileName().toString()) + " kind=" + kind + " position=" + position
            + (nearTail ? " (last 1 MiB)" : " (uniform)");
    }

    private Outcome judge(final Path directory, final long damagedFile, final boolean killed, final String damage) {
        final Outcome outcome;
        String detail = "";
        try (BlockCache cache = cache()) {
            final SegmentStore store;
            try {
                store = store(cache, directory);
            } catch (final LogCorruptedException e) {
                if (e.fileNumber() == damagedFile) {
                    return Outcome.DETECTED;
                }
                failures.add((killed ? "killed " : "clean ") + damage + ": WRONG_FILE " + e.getMessage());
                return Outcome.WRONG_FILE;
            } catch (final RuntimeException e) {
                failures.add((killed ? "killed " : "clean ") + damage + ": OTHER_ERROR " + e);
                return Outcome.OTHER_ERROR;
            }
            try {
                long lost = 0;
                boolean wrong = false;
                for (int s = 0; s < SEGMENTS; s++) {
                    final long length = store.exists(name(s)) ? store.info(name(s)).length() : 0;
                    lost += Math.max(0, acknowledged[s] - length);
                    for (long offset = 0; offset < Math.min(length, acknowledged[s]); ) {
                        final int n = (int) Math.min(64 * 1024, Math.min(length, acknowledged[s]) - offset);
                        try (ReadResult result = store.readThrough(name(s), offset, n).join()) {
                            if (result.length() <= 0) {
                                wrong = true;
                                break;
                            }
                            final byte[] got = ByteBufUtil.getBytes(result.data());
                            if (!java.util.Arrays.equals(got, pattern(s, offset, got.length))) {
                                wrong = true;
                                break;
                            }
                            offset += got.length;
                        }
                    }
                }
                if (wrong) {
                    outcome = Outcome.WRONG_BYTES;
                } else if (lost == 0) {
                    outcome = Outcome.INTACT;
                } else if (killed && lost <= batchWindow) {
                    outcome = Outcome.TAIL_CUT;
                } else {
                    outcome = Outcome.SILENT_LOSS;
                    detail = " lost=" + lost;
                }
            } finally {
                store.close();
            }
        } catch (final RuntimeException e) {
            failures.add((killed ? "killed " : "clean ") + damage + ": OTHER_ERROR while reading " + e);
            return Outcome.OTHER_ERROR;
        }
        if (outcome.failure) {
            failures.add((killed ? "killed " : "clean ") + damage + ": " + outcome + detail);
        }
        return outcome;
    }

    private SegmentStore store(final BlockCache cache, final Path directory) {
        return SegmentStore.builder(cache)
            .name("damage")
            .cacheManager(CacheManager.builder(cache).generationPeriod(Duration.ZERO).registerMBean(false))
            .log(logConfig(directory))
            .logCorruptionPolicy(CorruptionPolicy.FAIL)
            .build();
    }

    /**
     * 4 MiB files (so 20,000 appends fill several), pre-written, no spares: the default batch and
     * durability. No recovery checkpoint: the trials measure what the open itself detects, and
     * with one the files before it are checked after the open instead (docs/log-format.md).
     */
    private static LogConfig logConfig(final Path directory) {
        return LogConfig.builder(directory).fileLength(4L << 20).spareFiles(0).preWrite(true).checkpointFiles(0).build();
    }

    private static BlockCache cache() {
        return BlockCache.builder().capacity(64L << 20).registerMBean(false).name("damage").build();
    }

    /** End of the file's used bytes: the whole file, or where it is zero from a page boundary on. */
    private static long dataEnd(final Path file) throws IOException {
        final long size = Files.size(file);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            final ByteBuffer page = ByteBuffer.allocate(PAGE);
            long end = size & -(long) PAGE;
            while (end > PAGE) {
                page.clear();
                channel.read(page, end - PAGE);
                boolean zero = true;
                for (int i = 0; i < PAGE && zero; i++) {
                    zero = page.get(i) == 0;
                }
                if (!zero) {
                    break;
                }
                end -= PAGE;
            }
            return Math.max(end, 2L * PAGE);
        }
    }

    private static List<Path> logFiles(final Path directory) throws IOException {
        final List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "log-*.log")) {
            stream.forEach(files::add);
        }
        files.sort(Comparator.comparing(Path::toString));
        return files;
    }

    private static void copy(final Path from, final Path to) throws IOException {
        Files.createDirectories(to);
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(from)) {
            for (final Path file : stream) {
                if (!file.getFileName().toString().equals("LOCK") && !file.getFileName().toString().equals(".writer-lock")) {
                    Files.copy(file, to.resolve(file.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private static void delete(final Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            for (final Path file : (Iterable<Path>) files::iterator) {
                Files.delete(file);
            }
        }
        Files.delete(directory);
    }

    private static String name(final int segment) {
        return "segment-" + segment;
    }

    /** Byte {@code offset} of segment {@code segment}: a pattern no shift reproduces. */
    static byte[] pattern(final int segment, final long from, final int length) {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            final long x = (from + i) * 0x9E3779B97F4A7C15L + segment * 0xBF58476D1CE4E5B9L;
            bytes[i] = (byte) (x >>> 56 ^ x >>> 29);
        }
        return bytes;
    }
}
