package io.streamcache.segmentstore;

import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.PowerCutDisk;
import io.streamcache.log.testing.PowerCutLogFile;
import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.testing.TestLogs.Ack;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.StoreLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link AggregatingWriter#force()} and {@link StoreLog#force()}: a force on demand under every
 * {@link DurabilityPolicy}. What reaches the disk is judged by {@link PowerCutDisk} (a power cut
 * drops every unforced page; a SIGKILL would keep the page cache and prove nothing about
 * forcing), and forces are counted by {@link HookedLogFile}.
 */
@Timeout(60)
class ForceTest {
    private static final Duration LONG = Duration.ofHours(1);

    @TempDir
    Path directory;

    private static DurabilityPolicy policy(final String name) {
        switch (name) {
            case "NEVER":
                return DurabilityPolicy.NEVER;
            case "INTERVAL":
                return DurabilityPolicy.interval(LONG);
            default:
                return DurabilityPolicy.EVERY_BATCH;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"NEVER", "INTERVAL", "EVERY_BATCH"})
    void shouldKeepEverythingAcknowledgedBeforeAForceThroughAPowerCut(final String name) throws Exception {
        final DurabilityPolicy durability = policy(name);
        final PowerCutDisk disk = new PowerCutDisk(7);
        final List<Ack> forced = new ArrayList<>();
        final Ack after;
        final LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).durability(durability).retryInterval(Duration.ZERO)
            .fileFactory(disk).build());
        final AggregatingWriter writer = AggregatingWriter.start(logDirectory);
        try {
            writer.create(writer.healthyEpoch(), 1, "a", null).get(10, TimeUnit.SECONDS);
            writer.create(writer.healthyEpoch(), 2, "b", null).get(10, TimeUnit.SECONDS);
            // About 300 KB over 96 KB files: several rolls, the last file partly written.
            final List<CompletableFuture<Long>> futures = new ArrayList<>();
            long offset = 0;
            for (int i = 0; i < 100; i++) {
                final int length = 1000 + i * 37;
                futures.add(writer.append(1, offset, data(1, offset, length)));
                forced.add(new Ack(1, offset, length));
                offset += length;
            }
            final CompletableFuture<Void> force = writer.force();
            force.get(10, TimeUnit.SECONDS);
            for (final CompletableFuture<Long> future : futures) {
                assertTrue(future.isDone() && !future.isCompletedExceptionally(), "an append before the force completed first");
            }
            // Acknowledged after the force, within the current file: written only (unless EVERY_BATCH).
            writer.append(2, 0, data(2, 0, 3000)).get(10, TimeUnit.SECONDS);
            after = new Ack(2, 0, 3000);
            assertTrue(writer.stats().filesRolled() >= 2, writer.stats().toString());
            disk.powerCut(PowerCutLogFile.Mode.DROP);
        } finally {
            writer.close();
            logDirectory.close();
        }
        TestLogs.assertContains(directory, forced);
        final boolean afterKept = TestLogScanner.records(directory).stream()
            .anyMatch(r -> r.type() == LogRecordDescriptor.TYPE_DATA && r.segmentId() == after.segment());
        if (durability == DurabilityPolicy.EVERY_BATCH) {
            assertTrue(afterKept, "EVERY_BATCH forces every acknowledged append");
        } else {
            // The model and the policy agree: an append acknowledged after the force was not forced.
            assertFalse(afterKept, "under " + durability + " the append after the force was only written");
        }
    }

    @Test
    void shouldKeepWhatEachThreadAppendedBeforeItsForceUnderConcurrentForcesAndAPowerCut() throws Exception {
        final int threads = 4;
        final int rounds = 30;
        final PowerCutDisk disk = new PowerCutDisk(11);
        final List<Ack> forced = java.util.Collections.synchronizedList(new ArrayList<>());
        final java.util.concurrent.atomic.AtomicLong forceCalls = new java.util.concurrent.atomic.AtomicLong();
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks(disk);
        final LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).durability(DurabilityPolicy.NEVER)
            .retryInterval(Duration.ZERO).fileFactory(hooks).build());
        final AggregatingWriter writer = AggregatingWriter.start(logDirectory);
        final long forcesBefore;
        try {
            for (int t = 1; t <= threads; t++) {
                writer.create(writer.healthyEpoch(), t, "s" + t, null).get(10, TimeUnit.SECONDS);
            }
            forcesBefore = hooks.forces.get();
            final List<CompletableFuture<Void>> producers = new ArrayList<>();
            for (int t = 1; t <= threads; t++) {
                final int segment = t;
                producers.add(CompletableFuture.runAsync(() -> {
                    long offset = 0;
                    for (int r = 0; r < rounds; r++) {
                        final List<CompletableFuture<Long>> appends = new ArrayList<>();
                        final List<Ack> acks = new ArrayList<>();
                        for (int i = 0; i < 3; i++) {
                            final int length = 200 + (segment * 131 + r * 17 + i * 7) % 3000;
                            appends.add(writer.append(segment, offset, data(segment, offset, length)));
                            acks.add(new Ack(segment, offset, length));
                            offset += length;
                        }
                        forceCalls.incrementAndGet();
                        writer.force().join();
                        for (final CompletableFuture<Long> append : appends) {
                            assertTrue(append.isDone() && !append.isCompletedExceptionally(), "an append before the force completed first");
                        }
                        forced.addAll(acks);
                    }
                }));
            }
            CompletableFuture.allOf(producers.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
            // A roll forces the file it leaves and the new file's SNAPSHOT.
            assertTrue(hooks.forces.get() - forcesBefore <= forceCalls.get() + 2 * writer.stats().filesRolled(),
                "at most one fdatasync per force call (and two per roll): " + (hooks.forces.get() - forcesBefore) + " for "
                    + forceCalls.get() + " calls");
            disk.powerCut(PowerCutLogFile.Mode.DROP);
        } finally {
            writer.close();
            logDirectory.close();
        }
        assertEquals(threads * rounds * 3, forced.size());
        TestLogs.assertContains(directory, forced);
    }

    @Test
    void shouldCoalesceForcesQueuedTogetherIntoOne() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).durability(DurabilityPolicy.NEVER)
                 .fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            writer.create(writer.healthyEpoch(), 1, "a", null).get(10, TimeUnit.SECONDS);
            final long before = hooks.forces.get();
            writer.append(1, 0, data(1, 0, 1000)).get(10, TimeUnit.SECONDS);
            assertEquals(before, hooks.forces.get(), "NEVER: an append is not forced");

            // Hold the writer in the write of the next append, queue 10 forces behind it, let go.
            final Semaphore gate = new Semaphore(0);
            hooks.gate = gate;
            final CompletableFuture<Long> held = writer.append(1, 1000, data(1, 1000, 1000));
            while (hooks.gateWaiting.get() == 0) {
                Thread.onSpinWait();
            }
            final List<CompletableFuture<Void>> forces = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                forces.add(writer.force());
            }
            hooks.gate = null;
            gate.release(Integer.MAX_VALUE / 2);
            held.get(10, TimeUnit.SECONDS);
            CompletableFuture.allOf(forces.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
            assertEquals(before + 1, hooks.forces.get(), "10 forces queued together: one fdatasync");

            // Nothing written since: a force forces nothing.
            writer.force().get(10, TimeUnit.SECONDS);
            assertEquals(before + 1, hooks.forces.get(), "nothing unforced: no fdatasync");
        }
    }

    @Test
    void shouldNotForceAgainUnderEveryBatch() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            writer.create(writer.healthyEpoch(), 1, "a", null).get(10, TimeUnit.SECONDS);
            writer.append(1, 0, data(1, 0, 1000)).get(10, TimeUnit.SECONDS);
            final long before = hooks.forces.get();
            writer.force().get(10, TimeUnit.SECONDS);
            assertEquals(before, hooks.forces.get(), "every acknowledged batch is forced already");
        }
    }

    @Test
    void shouldFailAForceWhoseFdatasyncFailsAndOneOnAFailedLog() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).durability(DurabilityPolicy.NEVER)
                 .retryInterval(Duration.ZERO).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            writer.create(writer.healthyEpoch(), 1, "a", null).get(10, TimeUnit.SECONDS);
            hooks.failForces = true;
            writer.append(1, 0, data(1, 0, 1000)).get(10, TimeUnit.SECONDS);
            final ExecutionException failed = assertThrows(ExecutionException.class, () -> writer.force().get(10, TimeUnit.SECONDS));
            assertInstanceOf(LogFailedException.class, failed.getCause());
            assertTrue(failed.getCause().getCause().getMessage().contains("Input/output error"), failed.getCause().toString());
            assertTrue(writer.isFailed());

            final ExecutionException rejected = assertThrows(ExecutionException.class, () -> writer.force().get(10, TimeUnit.SECONDS));
            assertInstanceOf(LogFailedException.class, rejected.getCause(), "a failed log rejects a force");

            hooks.failForces = false;
            writer.recover().get(10, TimeUnit.SECONDS);
            writer.append(writer.healthyEpoch(), 1, 0, data(1, 0, 1000), null).get(10, TimeUnit.SECONDS);
            writer.force().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldForceThroughTheStoreApiAndFailOnAClosedStore() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            final SegmentStore store = SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache))
                .log(TestLogs.small(directory).durability(DurabilityPolicy.NEVER).fileFactory(hooks).build()).build();
            final StoreLog log = store.log().orElseThrow();
            try {
                store.create("s");
                final CompletableFuture<Long> queued = store.appendAsync("s", 0, data(1, 0, 5000));
                final long before = hooks.forces.get();
                log.force().get(10, TimeUnit.SECONDS);
                assertTrue(queued.isDone(), "the append queued before the force completed first");
                assertEquals(before + 1, hooks.forces.get(), "one fdatasync for what NEVER wrote");
            } finally {
                store.close();
            }
            final CompletableFuture<Void> closed = log.force();
            final ExecutionException e = assertThrows(ExecutionException.class, () -> closed.get(10, TimeUnit.SECONDS));
            assertInstanceOf(CacheClosedException.class, e.getCause());
        }
    }
}
