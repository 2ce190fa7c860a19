package io.streamcache.bench.jmh;

import io.streamcache.segmentstore.internal.index.AvlReadIndex;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;

/**
 * The read index against the JDK's ordered maps holding the same entries: a floor lookup of the
 * entry containing a random segment offset, and the streaming update (append a new entry at the
 * right edge and drop the oldest at the left, as a segment that is written and truncated does).
 * Single-threaded: the index is used under its segment's lock.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 10, time = 1)
@State(Scope.Benchmark)
public class ReadIndexBenchmark {
    /** Segment bytes per index entry: the store's default maximum entry length. */
    private static final int ENTRY_LENGTH = 1 << 20;
    private static final int LOOKUPS = 1 << 16;

    @Param({"avl", "treemap", "skiplist"})
    public String index;

    @Param({"1000", "100000"})
    public int entryCount;

    private AvlReadIndex avl;
    private NavigableMap<Long, ReadIndexEntry> map;
    private final long[] lookups = new long[LOOKUPS];
    private int nextLookup;
    private long nextOffset;

    @Setup(Level.Trial)
    public void fill() {
        avl = new AvlReadIndex();
        map = "skiplist".equals(index) ? new ConcurrentSkipListMap<>() : new TreeMap<>();
        for (int i = 0; i < entryCount; i++) {
            add(new ReadIndexEntry((long)i * ENTRY_LENGTH, ENTRY_LENGTH, 1, 0));
        }
        nextOffset = (long)entryCount * ENTRY_LENGTH;
        final SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < LOOKUPS; i++) {
            lookups[i] = random.nextLong((long)entryCount * ENTRY_LENGTH);
        }
    }

    private void add(final ReadIndexEntry entry) {
        if ("avl".equals(index)) {
            avl.insert(entry);
        } else {
            map.put(entry.offset(), entry);
        }
    }

    /**
     * Finds the entry containing a random offset (floor lookup).
     */
    @Benchmark
    public ReadIndexEntry lookup() {
        final long offset = lookups[nextLookup++ & (LOOKUPS - 1)];
        if ("avl".equals(index)) {
            return avl.floorContaining(offset);
        }
        final Map.Entry<Long, ReadIndexEntry> floor = map.floorEntry(offset);
        return floor == null ? null : floor.getValue();
    }

    /**
     * Adds an entry at the right edge and removes the first: the index of a segment being
     * appended to and truncated, at a constant size.
     */
    @Benchmark
    public ReadIndexEntry appendAndTruncate() {
        final ReadIndexEntry entry = new ReadIndexEntry(nextOffset, ENTRY_LENGTH, 1, 0);
        nextOffset += ENTRY_LENGTH;
        if ("avl".equals(index)) {
            avl.insert(entry);
            return avl.removeFirst();
        }
        map.put(entry.offset(), entry);
        return map.pollFirstEntry().getValue();
    }
}
