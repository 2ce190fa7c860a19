package io.streamcache.segmentstore;

import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.testing.TestLogs.Ack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Disk errors: a full disk, a file that cannot be created, a force that fails. Each fails the
 * affected requests with the cause, fails the writer (new requests rejected with a clear
 * error) until {@code recover()} succeeds on a healthy disk, and loses nothing acknowledged.
 */
@Timeout(60)
class DiskErrorTest {
    /** Forces in flight of the writers under test: 1 here, more in {@link ForcesInFlightDiskErrorTest}. */
    int forcesInFlight() {
        return 1;
    }

    /** Segment whose appends all fail: none of its bytes may be in the log in the end. */
    private static final int FAILED_SEGMENT = 9;

    @TempDir
    Path directory;

    private static Throwable cause(final CompletableFuture<Long> future) {
        final ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    private static void assertFailedWith(final CompletableFuture<Long> future, final String message) {
        final Throwable failure = cause(future);
        assertInstanceOf(LogFailedException.class, failure);
        assertTrue(failure.getMessage().contains(message), failure.getMessage());
        assertInstanceOf(IOException.class, failure.getCause());
        assertEquals(message, failure.getCause().getMessage());
    }

    private static long appendAll(final AggregatingWriter writer, final int segment, final long from, final int count,
                                  final List<Ack> acks) throws Exception {
        long offset = from;
        for (int i = 0; i < count; i++) {
            final int length = 500 + 37 * i;
            assertEquals(offset, writer.append(segment, offset, data(segment, offset, length)).get(10, TimeUnit.SECONDS));
            acks.add(new Ack(segment, offset, length));
            offset += length;
        }
        return offset;
    }

    private void assertNothingOf(final int segment) throws IOException {
        for (final TestLogScanner.Record record : TestLogScanner.records(directory)) {
            assertFalse(record.segmentId() == segment, () -> "a failed request's record is in the log: " + record);
        }
    }

    @Test
    void shouldFailOnAFullDiskRejectUntilRecoveredAndLoseNothingAcknowledged() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final List<Ack> acks = new ArrayList<>();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).forcesInFlight(forcesInFlight())
                 .retryInterval(Duration.ZERO).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            long offset = appendAll(writer, 1, 0, 20, acks);
            final long epochBefore = writer.healthyEpoch();

            hooks.space.set(0);
            final List<CompletableFuture<Long>> failed = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                failed.add(writer.append(epochBefore, FAILED_SEGMENT, i * 100L, data(FAILED_SEGMENT, i * 100L, 100), null));
            }
            for (final CompletableFuture<Long> future : failed) {
                final Throwable failure = cause(future);
                assertInstanceOf(LogFailedException.class, failure);
                assertTrue(failure.getMessage().contains("No space left on device"), failure.getMessage());
            }
            assertFailedWith(failed.get(0), "No space left on device");
            assertTrue(writer.isFailed());
            assertTrue(writer.stats().failed());

            // New requests are refused at once, with the cause; one admitted before the error fails.
            final LogFailedException rejected = assertThrows(LogFailedException.class, () -> writer.append(1, 0, data(1, 0, 10)));
            assertTrue(rejected.getMessage().contains("recover()"), rejected.getMessage());
            assertTrue(rejected.getMessage().contains("No space left on device"), rejected.getMessage());
            assertInstanceOf(LogFailedException.class, cause(writer.append(epochBefore, FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, 10),
                null)));

            // Still full: recovery fails and the writer stays failed.
            final ExecutionException stillFull = assertThrows(ExecutionException.class, () -> writer.recover().get(10, TimeUnit.SECONDS));
            assertInstanceOf(LogFailedException.class, stillFull.getCause());
            assertTrue(writer.isFailed());

            // Space returns: recovery succeeds, appends continue (in a new epoch) where they were.
            hooks.space.set(Long.MAX_VALUE);
            writer.recover().get(10, TimeUnit.SECONDS);
            assertFalse(writer.isFailed());
            assertTrue(writer.healthyEpoch() > epochBefore);
            assertInstanceOf(LogFailedException.class, cause(writer.append(epochBefore, 1, offset, data(1, offset, 10), null)),
                "a request admitted before the error fails after the recovery too");
            offset = appendAll(writer, 1, offset, 20, acks);
            assertTrue(writer.stats().failedRequests() >= 7);
        }
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        assertNothingOf(FAILED_SEGMENT);
    }

    @Test
    void shouldRetryAFileRollThatFailedWhenRecovered() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final List<Ack> acks = new ArrayList<>();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).forcesInFlight(forcesInFlight())
                 .retryInterval(Duration.ZERO).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            hooks.failOpens = true;
            long offset = 0;
            CompletableFuture<Long> failed = null;
            for (int i = 0; i < 100 && failed == null; i++) {
                final CompletableFuture<Long> future = writer.append(1, offset, data(1, offset, 3000));
                try {
                    future.get(10, TimeUnit.SECONDS);
                    acks.add(new Ack(1, offset, 3000));
                    offset += 3000;
                } catch (final ExecutionException e) {
                    failed = future;
                }
            }
            assertTrue(failed != null, "the roll failed");
            assertFailedWith(failed, "No space left on device");
            assertEquals(0, writer.stats().filesRolled());
            hooks.failOpens = false;
            writer.recover().get(10, TimeUnit.SECONDS);
            offset = appendAll(writer, 1, offset, 10, acks);
            assertEquals(1, writer.stats().filesRolled());
        }
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
    }

    @Test
    void shouldOverwriteABatchWhoseForceFailedBeforeAcceptingMore() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final List<Ack> acks = new ArrayList<>();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).forcesInFlight(forcesInFlight())
                 .retryInterval(Duration.ZERO).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            long offset = appendAll(writer, 1, 0, 5, acks);
            hooks.failForces = true;
            // The write reaches the file, the force fails: the records are in the file for now.
            assertFailedWith(writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, 2000)), "Input/output error");
            assertTrue(TestLogScanner.records(directory).stream().anyMatch(r -> r.segmentId() == FAILED_SEGMENT));
            hooks.failForces = false;
            writer.recover().get(10, TimeUnit.SECONDS);
            // The recovery zeroed the failed batch's range before anything else was written there.
            assertNothingOf(FAILED_SEGMENT);
            offset = appendAll(writer, 1, offset, 5, acks);
        }
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        assertNothingOf(FAILED_SEGMENT);
    }

    @Test
    void shouldRetryByItselfOnceSpaceReturnsAndLoseOrDuplicateNothing() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final LogConfig config = TestLogs.small(directory).forcesInFlight(forcesInFlight()).retryInterval(Duration.ofMillis(5))
            .fileFactory(hooks).build();
        final List<Long> acknowledged = new ArrayList<>();
        try (io.streamcache.core.cache.BlockCache cache = io.streamcache.segmentstore.TestSegments.cache(1 << 20);
             io.streamcache.segmentstore.SegmentStore store = io.streamcache.segmentstore.SegmentStore.builder(cache).log(config).build()) {
            store.create("s");
            long offset = 0;
            for (int i = 0; i < 10; i++) {
                acknowledged.add(store.append("s", data(1, offset, 700)));
                offset += 700;
            }
            hooks.space.set(0);
            final long at = offset;
            final LogFailedException full = assertThrows(LogFailedException.class, () -> store.append("s", data(1, at, 700)));
            assertTrue(full.getMessage().contains("No space left on device"), full.getMessage());
            assertEquals(offset, store.info("s").length(), "the failed append's offset was given back");
            // Still full: the writer's own retries fail, appends stay refused, nothing is acknowledged.
            assertThrows(LogFailedException.class, () -> store.append("s", data(1, at, 700)));
            assertEquals(offset, store.info("s").length());

            hooks.space.set(Long.MAX_VALUE);
            // Nobody calls recover(): the writer retries by itself and appends go through again.
            TestLogs.awaitTrue(() -> !store.logWriter().isFailed(), "the writer recovered by itself");
            assertTrue(store.logWriter().automaticRecoveries() >= 1);
            for (int i = 0; i < 10; i++) {
                acknowledged.add(store.append("s", data(1, offset, 700)));
                offset += 700;
            }
            assertEquals(offset, store.info("s").length());
        }
        for (int i = 0; i < acknowledged.size(); i++) {
            assertEquals(700L * i, acknowledged.get(i), "contiguous: nothing lost, nothing twice");
        }
        try (io.streamcache.core.cache.BlockCache cache = io.streamcache.segmentstore.TestSegments.cache(1 << 20);
             io.streamcache.segmentstore.SegmentStore reopened = io.streamcache.segmentstore.SegmentStore.builder(cache)
                 .log(TestLogs.small(directory).forcesInFlight(forcesInFlight()).build()).build()) {
            final long length = reopened.info("s").length();
            assertEquals(700L * acknowledged.size(), length);
            try (io.streamcache.segmentstore.ReadResult result = reopened.readThrough("s", 0, (int) length).get(10, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0);
                org.junit.jupiter.api.Assertions.assertArrayEquals(TestLogs.bytes(1, 0, result.length()),
                    io.streamcache.segmentstore.TestSegments.bytes(result));
            }
        }
        TestLogs.assertWellFormed(directory);
    }
}
