package io.streamcache.bench.sim;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The simulator's workloads: synthetic streaming workloads generated from a seed (the same seed
 * gives the same trace, on any machine) and the two cache2k key/value traces shipped in the
 * jar's resources. Stateless and thread-safe.
 *
 * <p>Every generator registers its readers as a broker would: a reader is opened at the block it
 * starts from, each read moves it past the block, and it is closed when it stops reading.
 * {@code scale} multiplies the length of the synthetic workloads (1.0 is the documented run).
 */
public final class Workloads {
    /** The synthetic streaming workloads and the key/value traces, in report order. */
    public static final List<String> NAMES = List.of("tail", "catchup", "followers-200", "followers-500", "followers-2000",
        "zipf", "churn", "followers-500-idle", "followers-500-late", "catchup-crash", "mixed", "web07", "web12");

    private Workloads() {
    }

    /**
     * @param name  one of {@link #NAMES}.
     * @param seed  the random seed of the synthetic workloads (the traces ignore it).
     * @param scale length multiplier of the synthetic workloads, &gt; 0.
     */
    public static Trace build(final String name, final long seed, final double scale) {
        if (!(scale > 0)) {
            throw new IllegalArgumentException("scale=" + scale + " must be > 0");
        }
        return switch (name) {
            case "tail" -> tail(seed, scale);
            case "catchup" -> catchUp(seed, scale);
            case "followers-200" -> followers(seed, scale, 200, "");
            case "followers-500" -> followers(seed, scale, 500, "");
            case "followers-2000" -> followers(seed, scale, 2000, "");
            case "followers-500-idle" -> followers(seed, scale, 500, "idle");
            case "followers-500-late" -> followers(seed, scale, 500, "late");
            case "catchup-crash" -> catchUp(seed, scale, "catchup-crash",
                "catchup, but each catch-up reader stops at 10-90% of its segment without closing", 16, 4096, 2, 32, true);
            case "mixed" -> catchUp(seed, scale, "mixed",
                "64 segments of 1,024 history blocks, 3 tail readers each (lag 0-256), 2 catch-up scans from block 0", 64, 1024, 3, 256,
                false);
            case "zipf" -> zipf(seed, scale);
            case "churn" -> churn(seed, scale);
            case "web07" -> keyValue("web07", "traces/cache2k-web07.bin");
            case "web12" -> keyValue("web12", "traces/cache2k-web12.bin");
            default -> throw new IllegalArgumentException("unknown workload=" + name + " (expected one of " + NAMES + ")");
        };
    }

    private static int steps(final int base, final double scale) {
        return Math.max(1, (int) Math.round(base * scale));
    }

    /**
     * Tail readers: 16 segments, appended to in random order; each has a fast tail reader (0 to 4
     * blocks behind the writer) and a slow one (8 to 256 blocks behind). The data worth keeping
     * is what lies between each segment's slow reader and its writer.
     */
    static Trace tail(final long seed, final double scale) {
        final SplittableRandom random = new SplittableRandom(seed);
        final Trace.Builder b = new Trace.Builder("tail",
            "16 segments, each with a fast (lag 0-4 blocks) and a slow (lag 8-256) tail reader", true);
        final int segments = 16;
        final int[] seg = new int[segments];
        final int[][] lag = new int[segments][2];
        final int[][] reader = new int[segments][2];
        long window = 0;
        for (int s = 0; s < segments; s++) {
            seg[s] = b.createSegment();
            lag[s][0] = random.nextInt(5);
            lag[s][1] = 8 + random.nextInt(249);
            window += lag[s][1];
            reader[s][0] = b.openReader(seg[s], 0, Trace.TAIL);
            reader[s][1] = b.openReader(seg[s], 0, Trace.TAIL);
        }
        final int steps = steps(300_000, scale);
        for (int t = 0; t < steps; t++) {
            final int s = random.nextInt(segments);
            b.append(seg[s]);
            final int written = b.length(seg[s]);
            for (int r = 0; r < 2; r++) {
                final int block = written - 1 - lag[s][r];
                if (block >= 0) {
                    b.read(seg[s], block, reader[s][r]);
                }
            }
        }
        return b.build(sizes(window, 0.25, 0.5, 1, 2), "x the sum of the slow readers' lags (" + window + " blocks)");
    }

    /**
     * Catch-up readers: 16 segments with 4,096 blocks of history each and two tail readers each
     * (lags 0-32 blocks); two catch-up readers at a time scan a random segment from block 0 to
     * its end, one block per append, then close and another starts.
     */
    static Trace catchUp(final long seed, final double scale) {
        return catchUp(seed, scale, "catchup",
            "16 segments of 4,096 history blocks, 2 tail readers each (lag 0-32), 2 catch-up scans from block 0", 16, 4096, 2, 32, false);
    }

    /**
     * The catch-up workload with its parameters; {@code crash}: each catch-up reader stops at a
     * random 10-90% of its segment and is never closed (a consumer that crashed).
     */
    static Trace catchUp(final long seed, final double scale, final String name, final String description, final int segments,
                         final int history, final int tailReaders, final int maxLag, final boolean crash) {
        final SplittableRandom random = new SplittableRandom(seed);
        final Trace.Builder b = new Trace.Builder(name, description, true);
        final int[] seg = new int[segments];
        final int[][] lag = new int[segments][tailReaders];
        final int[][] reader = new int[segments][tailReaders];
        long window = 0;
        for (int s = 0; s < segments; s++) {
            seg[s] = b.createSegment();
            for (int k = 0; k < history; k++) {
                b.append(seg[s]);
            }
        }
        for (int s = 0; s < segments; s++) {
            for (int r = 0; r < tailReaders; r++) {
                lag[s][r] = random.nextInt(maxLag + 1);
                window = Math.max(window, 0) + lag[s][r];
                reader[s][r] = b.openReader(seg[s], history, Trace.TAIL);
            }
        }
        final int scanners = 2;
        final int[] scanSeg = new int[scanners];
        final int[] scanPos = new int[scanners];
        final int[] scanReader = new int[scanners];
        final int[] scanStop = new int[scanners];
        final SplittableRandom crashes = new SplittableRandom(seed ^ 0x5eed);
        for (int c = 0; c < scanners; c++) {
            scanSeg[c] = random.nextInt(segments);
            scanReader[c] = b.openReader(seg[scanSeg[c]], 0, Trace.CATCHUP);
            scanStop[c] = crash ? history / 10 + crashes.nextInt(history * 8 / 10) : Integer.MAX_VALUE;
        }
        final int steps = steps(200_000, scale);
        for (int t = 0; t < steps; t++) {
            final int s = random.nextInt(segments);
            b.append(seg[s]);
            final int written = b.length(seg[s]);
            for (int r = 0; r < tailReaders; r++) {
                final int block = written - 1 - lag[s][r];
                if (block >= history) {
                    b.read(seg[s], block, reader[s][r]);
                }
            }
            for (int c = 0; c < scanners; c++) {
                final int cs = seg[scanSeg[c]];
                b.read(cs, scanPos[c]++, scanReader[c]);
                if (scanPos[c] >= b.length(cs) - 64 || scanPos[c] >= scanStop[c]) {
                    if (scanPos[c] < scanStop[c]) {
                        b.closeReader(cs, scanReader[c]); // a crashed reader is never closed
                    }
                    scanSeg[c] = random.nextInt(segments);
                    scanPos[c] = 0;
                    scanReader[c] = b.openReader(seg[scanSeg[c]], 0, Trace.CATCHUP);
                    if (crash) {
                        scanStop[c] = history / 10 + crashes.nextInt(history * 8 / 10);
                    }
                }
            }
        }
        return b.build(sizes(window, 0.5, 1, 2, 4, 8), "x the sum of the tail readers' lags (" + window + " blocks)");
    }

    /**
     * Follower groups: 4 groups at a time, each a leader reading a 10-lag-long historical range of
     * its own segment block by block (not cached: every leader read is a miss), and two followers
     * replaying the range {@code lag} and {@code 1.1 * lag} blocks behind it; the followers are
     * registered with the leader (a broker knows a range's consumer groups and their committed
     * offsets) and fetch once the leader is their lag ahead. When the last follower is done a new
     * group starts on a fresh segment. Meanwhile 4 writers append to segments nobody reads
     * yet (one block each per step) and 8 tail segments are read right behind their writer.
     */
    static Trace followers(final long seed, final double scale, final int lag, final String variant) {
        final SplittableRandom random = new SplittableRandom(seed ^ lag);
        final boolean idle = variant.equals("idle");
        final boolean late = variant.equals("late");
        final String description = "4 groups (leader + followers at " + lag + " and "
            + (lag + lag / 10) + " blocks) replaying 10-lag ranges; 4 unread writers; 8 tail segments"
            + (idle ? "; plus 2 idle registered readers per writer and tail segment, and per group a consumer that crashes"
                + " (stops without closing) a third of the way in" : "")
            + (late ? "; followers register at their first read, not when the leader starts" : "");
        final Trace.Builder b = new Trace.Builder("followers-" + lag + (variant.isEmpty() ? "" : "-" + variant), description, true);
        final int[] crashed = new int[4];
        final int[] crashedPos = new int[4];
        final int groups = 4;
        final int range = 10 * lag;
        final int lag2 = lag + lag / 10;
        final int[] groupSeg = new int[groups];
        final int[] leaderPos = new int[groups];
        final int[][] followerPos = new int[groups][2];
        final int[] leader = new int[groups];
        final int[][] follower = new int[groups][2];
        final int[] unread = new int[4];
        for (int w = 0; w < unread.length; w++) {
            unread[w] = b.createSegment();
        }
        final int[] tailSeg = new int[8];
        final int[] tailReader = new int[8];
        final int[] tailLag = new int[8];
        for (int k = 0; k < tailSeg.length; k++) {
            tailSeg[k] = b.createSegment();
            tailLag[k] = random.nextInt(17);
            tailReader[k] = b.openReader(tailSeg[k], 0, Trace.TAIL);
        }
        if (idle) {
            // Registered and never read, never closed: consumers that connected and went away.
            for (final int w : unread) {
                b.openReader(w, 0, Trace.FOLLOWER);
                b.openReader(w, 0, Trace.FOLLOWER);
            }
            for (final int k : tailSeg) {
                b.openReader(k, 0, Trace.TAIL);
                b.openReader(k, 0, Trace.TAIL);
            }
        }
        // The first groups start a quarter of a range apart, so that groups end at different times.
        final int[] startAt = new int[groups];
        for (int g = 0; g < groups; g++) {
            startGroup(b, g, range, groupSeg, leaderPos, followerPos, leader, follower);
            startAt[g] = g * range / groups;
        }
        final int steps = steps(Math.max(60_000, 6 * range), scale);
        for (int t = 0; t < steps; t++) {
            for (final int w : unread) {
                b.append(w);
            }
            final int k = random.nextInt(tailSeg.length);
            b.append(tailSeg[k]);
            final int tb = b.length(tailSeg[k]) - 1 - tailLag[k];
            if (tb >= 0) {
                b.read(tailSeg[k], tb, tailReader[k]);
            }
            for (int g = 0; g < groups; g++) {
                if (t < startAt[g]) {
                    continue;
                }
                final int s = groupSeg[g];
                if (leader[g] == -1) {
                    // The broker knows the range's consumer groups: the followers are registered
                    // at the range start (their committed offset) when the leader starts, and
                    // start fetching once the leader is their lag ahead.
                    leader[g] = b.openReader(s, 0, Trace.CATCHUP);
                    if (!late) {
                        follower[g][0] = b.openReader(s, 0, Trace.FOLLOWER);
                        follower[g][1] = b.openReader(s, 0, Trace.FOLLOWER);
                    }
                    if (idle) {
                        crashed[g] = b.openReader(s, 0, Trace.FOLLOWER);
                        crashedPos[g] = 0;
                    }
                }
                if (idle && crashedPos[g] < range / 3 && leaderPos[g] - crashedPos[g] >= lag) {
                    b.read(s, crashedPos[g]++, crashed[g]); // stops at a third of the range, never closed
                }
                if (leaderPos[g] < range) {
                    b.read(s, leaderPos[g]++, leader[g]);
                    if (leaderPos[g] == range) {
                        b.closeReader(s, leader[g]);
                    }
                }
                final int[] lags = {lag, lag2};
                for (int f = 0; f < 2; f++) {
                    final boolean due = leaderPos[g] == range || leaderPos[g] - followerPos[g][f] >= lags[f];
                    if (followerPos[g][f] < range && due) {
                        if (follower[g][f] == -1) {
                            follower[g][f] = b.openReader(s, followerPos[g][f], Trace.FOLLOWER);
                        }
                        b.read(s, followerPos[g][f]++, follower[g][f]);
                        if (followerPos[g][f] == range) {
                            b.closeReader(s, follower[g][f]);
                        }
                    }
                }
                if (followerPos[g][0] == range && followerPos[g][1] == range) {
                    startGroup(b, g, range, groupSeg, leaderPos, followerPos, leader, follower);
                }
            }
        }
        final long window = (long) groups * lag2;
        return b.build(sizes(window, 0.5, 1, 1.5, 2, 4), "x the groups' follower windows (4 x " + lag2 + " = " + window + " blocks)");
    }

    private static void startGroup(final Trace.Builder b, final int g, final int range, final int[] groupSeg, final int[] leaderPos,
                                   final int[][] followerPos, final int[] leader, final int[][] follower) {
        // A segment whose range was written long ago: not in the cache, every leader read is a
        // miss that reads the block in. The leader's reader opens with its first read.
        groupSeg[g] = b.createSegment();
        leaderPos[g] = 0;
        followerPos[g][0] = 0;
        followerPos[g][1] = 0;
        leader[g] = -1;
        follower[g][0] = -1;
        follower[g][1] = -1;
    }

    /**
     * Zipf-popular segments: 256 segments of 512 history blocks, popularity Zipf(1.0). 8 consumer
     * sessions at a time each pick a segment by popularity, open a reader 0 to 256 blocks before
     * its end, read 16 to 128 blocks and close. Writers append to segments by the same popularity.
     */
    static Trace zipf(final long seed, final double scale) {
        final SplittableRandom random = new SplittableRandom(seed);
        final Trace.Builder b = new Trace.Builder("zipf",
            "256 segments, Zipf(1.0) popularity; 8 sessions read 16-128 blocks from 0-256 blocks before the end", true);
        final int segments = 256;
        final int[] seg = new int[segments];
        for (int s = 0; s < segments; s++) {
            seg[s] = b.createSegment();
            for (int k = 0; k < 512; k++) {
                b.append(seg[s]);
            }
        }
        final double[] cdf = zipfCdf(segments, 1.0);
        final int sessions = 8;
        final int[] sSeg = new int[sessions];
        final int[] sPos = new int[sessions];
        final int[] sLeft = new int[sessions];
        final int[] sReader = new int[sessions];
        for (int c = 0; c < sessions; c++) {
            startSession(b, random, cdf, seg, c, sSeg, sPos, sLeft, sReader);
        }
        final int steps = steps(100_000, scale);
        for (int t = 0; t < steps; t++) {
            b.append(seg[pick(cdf, random)]);
            for (int c = 0; c < sessions; c++) {
                final int s = seg[sSeg[c]];
                if (sPos[c] < b.length(s)) {
                    b.read(s, sPos[c]++, sReader[c]);
                    sLeft[c]--;
                }
                if (sLeft[c] <= 0 || sPos[c] >= b.length(s)) {
                    b.closeReader(s, sReader[c]);
                    startSession(b, random, cdf, seg, c, sSeg, sPos, sLeft, sReader);
                }
            }
        }
        return b.build(new long[] {1024, 2048, 4096, 8192, 16384}, "blocks (the history is 131,072 blocks)");
    }

    private static void startSession(final Trace.Builder b, final SplittableRandom random, final double[] cdf, final int[] seg,
                                     final int c, final int[] sSeg, final int[] sPos, final int[] sLeft, final int[] sReader) {
        sSeg[c] = pick(cdf, random);
        final int s = seg[sSeg[c]];
        sPos[c] = Math.max(0, b.length(s) - random.nextInt(257));
        sLeft[c] = 16 + random.nextInt(113);
        sReader[c] = b.openReader(s, sPos[c]);
    }

    /**
     * Segment churn: 32 live segments, each appended to until it reaches a random length of 500
     * to 3,000 blocks, then its readers are closed and it is deleted and replaced by a new one.
     * Each has a tail reader (lag 0-64 blocks); half of them also get a catch-up reader from
     * block 0 when they reach half their length, reading two blocks per append of the segment.
     */
    static Trace churn(final long seed, final double scale) {
        final SplittableRandom random = new SplittableRandom(seed);
        final Trace.Builder b = new Trace.Builder("churn",
            "32 live segments of 500-3,000 blocks, deleted and replaced; tail reader (lag 0-64), half with a catch-up reader", true);
        final int live = 32;
        final int[] seg = new int[live];
        final int[] life = new int[live];
        final int[] lag = new int[live];
        final int[] tail = new int[live];
        final int[] catchUp = new int[live];
        final int[] catchPos = new int[live];
        long window = 0;
        for (int s = 0; s < live; s++) {
            newChurnSegment(b, random, s, seg, life, lag, tail, catchUp, catchPos);
            window += lag[s];
        }
        final int steps = steps(250_000, scale);
        for (int t = 0; t < steps; t++) {
            final int s = random.nextInt(live);
            b.append(seg[s]);
            final int written = b.length(seg[s]);
            final int tb = written - 1 - lag[s];
            if (tb >= 0) {
                b.read(seg[s], tb, tail[s]);
            }
            if (catchUp[s] == -1 && written == life[s] / 2 && random.nextBoolean()) {
                catchUp[s] = b.openReader(seg[s], 0, Trace.CATCHUP);
                catchPos[s] = 0;
            }
            if (catchUp[s] >= 0) {
                for (int k = 0; k < 2 && catchPos[s] < Math.max(0, tb); k++) {
                    b.read(seg[s], catchPos[s]++, catchUp[s]);
                }
            }
            if (written >= life[s]) {
                b.closeReader(seg[s], tail[s]);
                if (catchUp[s] >= 0) {
                    b.closeReader(seg[s], catchUp[s]);
                }
                b.deleteSegment(seg[s]);
                newChurnSegment(b, random, s, seg, life, lag, tail, catchUp, catchPos);
            }
        }
        return b.build(sizes(Math.max(window, 1), 1, 2, 4, 8, 16), "x the sum of the tail readers' lags (" + window + " blocks)");
    }

    private static void newChurnSegment(final Trace.Builder b, final SplittableRandom random, final int s, final int[] seg,
                                        final int[] life, final int[] lag, final int[] tail, final int[] catchUp, final int[] catchPos) {
        seg[s] = b.createSegment();
        life[s] = 500 + random.nextInt(2501);
        lag[s] = random.nextInt(65);
        tail[s] = b.openReader(seg[s], 0, Trace.TAIL);
        catchUp[s] = -1;
        catchPos[s] = 0;
    }

    /**
     * A cache2k trace: one segment, each distinct key a block (numbered in order of first use),
     * every access a read without a reader. Sizes: 1, 2, 5, 10 and 20% of the distinct keys.
     */
    static Trace keyValue(final String name, final String resource) {
        final Trace.Builder b = new Trace.Builder(name, "cache2k " + name + " trace (CC BY 4.0, headissue GmbH)", false);
        final int segment = b.createSegment();
        final Map<Integer, Integer> blocks = new HashMap<>();
        try (InputStream in = Workloads.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + resource);
            }
            final DataInputStream data = new DataInputStream(new java.io.BufferedInputStream(in));
            while (true) {
                final int key;
                try {
                    key = data.readInt();
                } catch (final EOFException e) {
                    break;
                }
                final Integer block = blocks.computeIfAbsent(key, k -> blocks.size());
                b.read(segment, block, -1);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        final long distinct = blocks.size();
        final List<Long> sizes = new ArrayList<>();
        for (final double f : new double[] {0.01, 0.02, 0.05, 0.1, 0.2}) {
            sizes.add(Math.max(1, Math.round(distinct * f)));
        }
        return b.build(sizes.stream().mapToLong(Long::longValue).toArray(), "of " + distinct + " distinct keys: 1, 2, 5, 10, 20%");
    }

    private static long[] sizes(final long base, final double... factors) {
        final long[] sizes = new long[factors.length];
        for (int i = 0; i < factors.length; i++) {
            sizes[i] = Math.max(16, Math.round(base * factors[i]));
        }
        return sizes;
    }

    private static double[] zipfCdf(final int n, final double exponent) {
        final double[] cdf = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += 1.0 / Math.pow(i + 1, exponent);
            cdf[i] = sum;
        }
        for (int i = 0; i < n; i++) {
            cdf[i] /= sum;
        }
        return cdf;
    }

    private static int pick(final double[] cdf, final SplittableRandom random) {
        final double u = random.nextDouble();
        int lo = 0;
        int hi = cdf.length - 1;
        while (lo < hi) {
            final int mid = (lo + hi) >>> 1;
            if (cdf[mid] < u) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
