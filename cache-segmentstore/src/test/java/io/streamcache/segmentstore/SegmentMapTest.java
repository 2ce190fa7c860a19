package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SegmentMap}, the tables' open-addressing maps by name and by id: a randomized model test
 * against {@link HashMap}s (growth, tombstones, shrinking), and lookups under contention with
 * writers that put, replace and remove while readers look up (a segment never removed is always
 * found; any other lookup finds nothing or a segment with the key asked for).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SegmentMapTest {
    private static final long SEED = 14;

    private BlockCache cache;
    private CacheManager manager;
    private SegmentContext context;

    @BeforeEach
    void setUp() {
        cache = TestSegments.cache(1 << 20);
        manager = TestSegments.manualManager(cache).build();
        context = new SegmentContext(cache, manager.hooks(), 1000, true, 0, null);
    }

    @AfterEach
    void tearDown() {
        manager.close();
        cache.close();
    }

    private Segment segment(final int id, final String name) {
        return new Segment(id, name, context);
    }

    @Test
    void shouldMatchAHashMapUnderRandomOperations() {
        final Random random = new Random(SEED);
        final SegmentMap.ByName byName = new SegmentMap.ByName();
        final SegmentMap.ById byId = new SegmentMap.ById();
        final Map<String, Segment> names = new HashMap<>();
        final Map<Integer, Segment> ids = new HashMap<>();
        int nextId = 0;
        for (int step = 0; step < 200_000; step++) {
            // Phases of growth and of shrinking, so that the maps rebuild both ways.
            final int keys = (step / 20_000) % 2 == 0 ? 5_000 : 50;
            final int key = random.nextInt(keys);
            final String name = "s" + key;
            switch (random.nextInt(6)) {
                case 0, 1 -> {
                    final Segment segment = segment(nextId++, name);
                    final Segment present = names.get(name);
                    assertSame(present, byName.putIfAbsent(segment));
                    if (present == null) {
                        names.put(name, segment);
                    }
                    final Segment replaced = ids.put(segment.id, segment);
                    assertSame(replaced, byId.put(segment));
                }
                case 2 -> {
                    final Segment present = names.get(name);
                    if (present != null) {
                        assertTrue(byName.remove(present));
                        names.remove(name);
                        assertFalse(byName.remove(present), "removed once");
                    } else {
                        assertFalse(byName.remove(segment(-1, name)), "not the same segment");
                    }
                }
                case 3 -> {
                    final int id = ids.isEmpty() ? 0 : random.nextInt(nextId);
                    assertSame(ids.remove(id), byId.remove(id));
                }
                case 4 -> {
                    final int id = random.nextInt(nextId + 1);
                    final Segment present = ids.get(id);
                    if (present != null && random.nextBoolean()) {
                        assertTrue(byId.remove(present));
                        ids.remove(id);
                    } else {
                        assertSame(present, byId.get(id));
                    }
                }
                default -> {
                    assertSame(names.get(name), byName.get(name));
                    assertEquals(names.containsKey(name), byName.containsKey(name));
                }
            }
            assertEquals(names.size(), byName.size());
            assertEquals(ids.size(), byId.size());
            if (step % 10_000 == 0) {
                assertEquals(new HashSet<>(names.values()), new HashSet<>(byName.values()));
                assertEquals(new HashSet<>(ids.values()), new HashSet<>(byId.values()));
            }
        }
        for (final Map.Entry<String, Segment> e : names.entrySet()) {
            assertSame(e.getValue(), byName.get(e.getKey()));
        }
        for (final Map.Entry<Integer, Segment> e : ids.entrySet()) {
            assertSame(e.getValue(), byId.get(e.getKey()));
        }
        byName.clear();
        assertEquals(0, byName.size());
        assertNull(byName.get("s1"));
    }

    @Test
    void shouldFindEveryStableSegmentWhileWritersChurnTheRest() throws Exception {
        final SegmentMap.ByName byName = new SegmentMap.ByName();
        final SegmentMap.ById byId = new SegmentMap.ById();
        final int stable = 500;
        final List<Segment> stables = new ArrayList<>();
        for (int i = 0; i < stable; i++) {
            final Segment segment = segment(i, "stable-" + i);
            stables.add(segment);
            assertNull(byName.putIfAbsent(segment));
            assertNull(byId.put(segment));
        }
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            final int writer = w;
            threads.add(new Thread(() -> {
                final Random random = new Random(SEED + writer);
                final List<Segment> mine = new ArrayList<>();
                try {
                    start.await();
                    for (int step = 0; step < 100_000; step++) {
                        // Writer w owns the ids stable + w, stable + w + 2, ...: grow to thousands, then shrink.
                        final boolean grow = (step / 10_000) % 2 == 0;
                        if (grow || mine.isEmpty()) {
                            final int id = stable + writer + 2 * random.nextInt(20_000);
                            final Segment segment = segment(id, "churn-" + id);
                            if (byName.putIfAbsent(segment) == null) {
                                byId.put(segment);
                                mine.add(segment);
                            }
                        } else {
                            final Segment segment = mine.remove(random.nextInt(mine.size()));
                            assertTrue(byName.remove(segment));
                            assertSame(segment, byId.remove(segment.id));
                        }
                    }
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "writer-" + w));
        }
        final List<Thread> writers = new ArrayList<>(threads);
        for (int r = 0; r < 3; r++) {
            final int reader = r;
            threads.add(new Thread(() -> {
                final Random random = new Random(SEED * 31 + reader);
                try {
                    start.await();
                    while (!done.get()) {
                        final Segment expected = stables.get(random.nextInt(stable));
                        assertSame(expected, byName.get(expected.name), "a stable segment by name");
                        assertSame(expected, byId.get(expected.id), "a stable segment by id");
                        final int id = stable + random.nextInt(40_000);
                        final Segment byIdFound = byId.get(id);
                        if (byIdFound != null) {
                            assertEquals(id, byIdFound.id);
                        }
                        final Segment byNameFound = byName.get("churn-" + id);
                        if (byNameFound != null) {
                            assertEquals("churn-" + id, byNameFound.name);
                        }
                    }
                    // Iteration sees every stable segment.
                    final Set<Segment> seen = new HashSet<>();
                    byName.forEach(seen::add);
                    assertTrue(seen.containsAll(stables));
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "reader-" + r));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (final Thread writer : writers) {
            writer.join();
        }
        done.set(true);
        for (final Thread thread : threads) {
            thread.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        for (final Segment segment : stables) {
            assertSame(segment, byName.get(segment.name));
            assertSame(segment, byId.get(segment.id));
        }
        assertEquals(byName.size(), byId.size());
    }

    /**
     * A map emptied in its own iteration order (as a close deletes every segment) keeps short
     * probe chains through its shrinking rebuilds: with one mixing for every capacity the
     * segments left after a shrink all started in the last part of the smaller array and formed
     * one cluster as long as the map (thousands of slots at 100,000 segments).
     */
    @Test
    void shouldKeepProbeRunsShortWhenEmptiedInSlotOrder() {
        final int count = 100_000;
        final SegmentMap.ByName byName = new SegmentMap.ByName();
        final SegmentMap.ById byId = new SegmentMap.ById();
        for (int i = 0; i < count; i++) {
            final Segment segment = segment(i, "mq/" + (i % 2500) + "/topic" + (i / 2500));
            byName.put(segment);
            byId.put(segment);
        }
        for (final SegmentMap map : new SegmentMap[] {byName, byId}) {
            final List<Segment> order = map.values();
            int removed = 0;
            for (final Segment segment : order) {
                assertTrue(map.remove(segment));
                if (++removed % 1000 == 0) {
                    final int run = longestRun(map.slots());
                    assertTrue(run < 200, "a run of " + run + " occupied slots after " + removed + " removals of " + count);
                }
            }
            assertEquals(0, map.size());
        }
    }

    /**
     * The slot mix spreads sequential ids and similar names about as well as random hashes do:
     * the mean probe of a lookup stays within 20% of (1 + 1 / (1 - 3/4)) / 2 = 2.5, linear
     * probing's expected probe for random hashes at the map's fullest (3/4), in every array a
     * growing map goes through (random hashes: 2.46-2.52 at the fullest, simulated). A mix that
     * clusters fails it: the capacity's factor without the hash's own mix gives sequential ids a
     * mean probe in the thousands, and the hash's mix alone (no factor) these names 4.1.
     */
    @Test
    void shouldSpreadIdsAndNamesAsWellAsRandomHashes() {
        final SegmentMap.ByName byName = new SegmentMap.ByName();
        final SegmentMap.ById byId = new SegmentMap.ById();
        for (int i = 1; i <= 100_000; i++) {
            final Segment segment = segment(i, "mq/" + (i % 2500) + "/topic" + (i / 2500));
            byName.put(segment);
            byId.put(segment);
            if (i % 5_000 == 0) {
                assertTrue(meanProbe(byName) < 3.0, "by name, " + i + " segments: mean probe " + meanProbe(byName));
                assertTrue(meanProbe(byId) < 3.0, "by id, " + i + " segments: mean probe " + meanProbe(byId));
            }
        }
    }

    /** Slots a lookup of each segment reads, on average (1 when every segment is in its first slot). */
    private static double meanProbe(final SegmentMap map) {
        final Object[] slots = map.slots();
        long probes = 0;
        int count = 0;
        for (int i = 0; i < slots.length; i++) {
            if (SegmentMap.isSegment(slots[i])) {
                final int start = SegmentMap.start(map.hashOf((Segment) slots[i]), slots.length);
                probes += 1 + (i - start + slots.length) % slots.length;
                count++;
            }
        }
        return probes / (double) count;
    }

    /** A map made room for takes that many segments into the same array, and keeps what it held. */
    @Test
    void shouldPutAsManyAsMadeRoomForWithoutARebuild() {
        final SegmentMap.ById byId = new SegmentMap.ById();
        for (int i = 0; i < 10; i++) {
            byId.put(segment(i, "s" + i));
        }
        byId.ensureCapacity(10_010);
        final Object[] slots = byId.slots();
        for (int i = 10; i < 10_010; i++) {
            byId.put(segment(i, "s" + i));
        }
        assertSame(slots, byId.slots(), "rebuilt while putting what it had room for");
        assertEquals(10_010, byId.size());
        for (int i = 0; i < 10_010; i++) {
            assertEquals(i, byId.get(i).id);
        }
        byId.ensureCapacity(5);
        assertSame(slots, byId.slots(), "room enough: nothing to do");
    }

    /** The longest run of slots that are not null (segments and tombstones), around the end. */
    private static int longestRun(final Object[] slots) {
        int longest = 0;
        int run = 0;
        for (int i = 0; i < 2 * slots.length; i++) {
            if (slots[i % slots.length] != null) {
                run++;
                longest = Math.max(longest, Math.min(run, slots.length));
            } else {
                run = 0;
            }
        }
        return longest;
    }
}
