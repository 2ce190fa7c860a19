package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SegmentMap}'s lock-free {@code putIfAbsent} under contention, against a reference: many
 * threads put, remove and look up the same keys while the maps grow and shrink through rebuilds
 * (which freeze the array the puts are racing into). Checked: no put is lost (a segment whose put
 * returned null is found by every later lookup until its putter removes it), none is duplicated
 * (two puts of one key never both succeed while the first is in the map; in the end every key is
 * in a map at most once and the sizes are exact), and every answer is one the reference allows.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SegmentMapConcurrentTest {
    private static final long SEED = 1414;

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

    /**
     * 8 threads over 3,000 shared keys, in rounds that grow the maps (puts win) and shrink them
     * (removals win), so that puts race with rebuilds both ways. Each key's owner in the reference
     * ({@code owners}) is set only by the thread whose put succeeded and cleared only by it before
     * it removes: so while a thread owns a key, every lookup and every other put of it must answer
     * its segment, and any answer for a key must carry that key.
     */
    @Test
    void shouldLoseAndDuplicateNothingWhileThreadsPutRemoveAndLookUpTheSameKeys() throws Exception {
        final int threads = 8;
        final int keys = 3_000;
        final int steps = 60_000;
        final SegmentMap.ByName byName = new SegmentMap.ByName();
        final SegmentMap.ById byId = new SegmentMap.ById();
        // Key k's segments all have id k (by id, the same key) and name "mq/k/topic".
        final ConcurrentHashMap<Integer, Segment> owners = new ConcurrentHashMap<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            final int worker = w;
            workers.add(new Thread(() -> {
                final Random random = new Random(SEED + worker);
                final List<Segment> mine = new ArrayList<>();
                try {
                    start.await();
                    for (int step = 0; step < steps && failure.get() == null; step++) {
                        final boolean grow = (step / 5_000) % 2 == 0;
                        final int op = random.nextInt(10);
                        final int key = random.nextInt(keys);
                        if (op < (grow ? 6 : 2)) {
                            put(byName, byId, owners, mine, key);
                        } else if (op < 7 && !mine.isEmpty()) {
                            final Segment segment = mine.remove(random.nextInt(mine.size()));
                            assertSame(segment, owners.remove(segment.id));
                            // By id first: a put that then wins the name finds the id free too.
                            assertTrue(byId.remove(segment), "an owned segment is in the map by id");
                            assertTrue(byName.remove(segment), "an owned segment is in the map by name");
                        } else {
                            lookUp(byName, byId, owners, key);
                        }
                    }
                    for (final Segment segment : mine) {
                        assertSame(segment, byName.get(segment.name), "kept to the end, by name");
                        assertSame(segment, byId.get(segment.id), "kept to the end, by id");
                    }
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "map-worker-" + w));
        }
        runAll(workers, failure);
        // Quiescent: each map holds exactly the owned segments, each key once.
        assertEquals(owners.size(), byName.size());
        assertEquals(owners.size(), byId.size());
        for (final SegmentMap map : new SegmentMap[] {byName, byId}) {
            final Map<Integer, Segment> seen = new HashMap<>();
            map.forEach(segment -> assertNull(seen.put(segment.id, segment), "key " + segment.id + " twice"));
            assertEquals(owners, seen);
        }
        for (int key = 0; key < keys; key++) {
            assertSame(owners.get(key), byName.get(name(key)));
            assertSame(owners.get(key), byId.get(key));
        }
    }

    private void put(final SegmentMap.ByName byName, final SegmentMap.ById byId, final ConcurrentHashMap<Integer, Segment> owners,
                     final List<Segment> mine, final int key) {
        final Segment owner = owners.get(key);
        final Segment segment = new Segment(key, name(key), context);
        final Segment present = byName.putIfAbsent(segment);
        if (present == null) {
            // Ours: no other put of this key may have succeeded, and no one owns it. Owned (in
            // the reference) only once in both maps, as it is removed from the reference first.
            assertNull(byId.putIfAbsent(segment), "by id: key " + key + " was free by name, so by id too");
            assertNull(owners.putIfAbsent(key, segment), "two puts of key " + key + " succeeded");
            mine.add(segment);
            return;
        }
        assertEquals(segment.name, present.name, "an answer with another key");
        if (owner != null && owners.get(key) == owner) {
            // Owned before the put began and still: the put must have met that very segment.
            assertSame(owner, present, "a put missed the owned segment of key " + key);
        }
    }

    private static void lookUp(final SegmentMap.ByName byName, final SegmentMap.ById byId,
                               final ConcurrentHashMap<Integer, Segment> owners, final int key) {
        final Segment owner = owners.get(key);
        final Segment found = byName.get(name(key));
        final Segment foundById = byId.get(key);
        if (found != null) {
            assertEquals(name(key), found.name, "a lookup by name answered another key");
        }
        if (foundById != null) {
            assertEquals(key, foundById.id, "a lookup by id answered another key");
        }
        if (owner != null && owners.get(key) == owner) {
            // Owned before the lookups began and still after them: both must have found it.
            assertSame(owner, found, "a lookup by name lost the owned segment of key " + key);
            assertSame(owner, foundById, "a lookup by id lost the owned segment of key " + key);
        }
    }

    /**
     * All threads put the same fresh keys at once, from an empty map (every put of the first keys
     * races with a rebuild): for each key exactly one put succeeds and every other returns its
     * segment. Repeated: a lost race shows in some runs only.
     */
    @RepeatedTest(5)
    void shouldLetExactlyOnePutOfAKeyWinWhenAllThreadsRaceForIt() throws Exception {
        final int threads = 6;
        final int keys = 20_000;
        final SegmentMap.ByName byName = new SegmentMap.ByName();
        final Segment[][] made = new Segment[threads][keys];
        final Segment[][] answers = new Segment[threads][keys];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            final int worker = w;
            workers.add(new Thread(() -> {
                try {
                    start.await();
                    for (int key = 0; key < keys; key++) {
                        made[worker][key] = new Segment(key, name(key), context);
                        answers[worker][key] = byName.putIfAbsent(made[worker][key]);
                    }
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "racer-" + w));
        }
        runAll(workers, failure);
        assertEquals(keys, byName.size());
        for (int key = 0; key < keys; key++) {
            final Segment inMap = byName.get(name(key));
            assertNotNull(inMap, "key " + key + " lost");
            final Map<Segment, Boolean> winners = new IdentityHashMap<>();
            for (int w = 0; w < threads; w++) {
                if (answers[w][key] == null) {
                    winners.put(made[w][key], true);
                } else {
                    assertSame(inMap, answers[w][key], "a losing put of key " + key + " answered another segment");
                }
            }
            assertEquals(1, winners.size(), "winners of key " + key);
            assertTrue(winners.containsKey(inMap), "the winner of key " + key + " is the one in the map");
        }
    }

    private static String name(final int key) {
        return "mq/" + key + "/topic";
    }

    /** Starts the workers, waits for them, and rethrows the first failure any of them recorded. */
    private static void runAll(final List<Thread> workers, final AtomicReference<Throwable> failure) throws InterruptedException {
        workers.forEach(Thread::start);
        for (final Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }
}
