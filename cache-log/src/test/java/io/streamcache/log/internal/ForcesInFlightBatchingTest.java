package io.streamcache.log.internal;

import io.streamcache.log.internal.recovery.LogRecovery;
import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogs;
import io.streamcache.log.testing.TestLogs.Ack;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * How batches are cut while forces are in flight ({@code LogConfig.forcesInFlight} above 1):
 * while a force runs, the next batch is written once it is as long as the batch being forced,
 * so the bytes that wait are split into batches of equal length, and a second force runs beside
 * the first (several batches in flight). The forces are held by a hook, so nothing here depends
 * on timing: a batch that waits would wait for the 30 s {@code maxDelay}. Batches are padded
 * ({@code AlignmentPolicy.PAD}), so each append's batch is one write.
 */
@Timeout(60)
class ForcesInFlightBatchingTest {
    private static final int SEGMENT = 1;

    @TempDir
    Path directory;

    private final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();

    /**
     * A (40,000 B) is written and its force held. B (10,000 B) arrives: shorter than A's batch, it
     * waits (the rule "a page at least" wrote it alone). C (35,000 B) arrives: B + C are longer
     * than A's batch, so they are written as one batch and forced while A's force is still held.
     * Then A's force returns and all three complete, in order, and recovery finds all three.
     */
    @Test
    void shouldWriteTheNextBatchBesideTheForceOnceItIsAsLongAsTheBatchInFlight() throws Exception {
        final int a = 40_000;
        final int b = 10_000;
        final int c = 35_000;
        final Semaphore releaseFirst = new Semaphore(0);
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).fileLength(1 << 20).batchLength(64 << 10)
            .alignment(AlignmentPolicy.PAD)
            .maxDelay(Duration.ofSeconds(30)).forcesInFlight(2).retryInterval(Duration.ZERO).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            writer.create(writer.healthyEpoch(), SEGMENT, "s1", null).get(10, TimeUnit.SECONDS);

            final AtomicInteger started = new AtomicInteger();
            hooks.forceHook = () -> {
                if (started.incrementAndGet() == 1) {
                    try {
                        releaseFirst.acquire();
                    } catch (final InterruptedException e) {
                        throw new IOException(e);
                    }
                }
            };
            try {
                final long payloadBefore = writer.stats().payloadBytes();
                final long batchesBefore = writer.stats().batches();
                final CompletableFuture<Long> first = writer.append(SEGMENT, 0, data(SEGMENT, 0, a));
                TestLogs.awaitTrue(() -> started.get() >= 1, () -> "the first batch's force in flight; events " + hooks.events + " stats " + writer.stats());

                final CompletableFuture<Long> second = writer.append(SEGMENT, a, data(SEGMENT, a, b));
                TestLogs.awaitTrue(() -> writer.stats().queueDepth() == 0, "B taken by the writer");
                // Give the writer the chance to write B alone, as it did before the rule.
                Thread.sleep(100);
                assertEquals(batchesBefore + 1, writer.stats().batches(), "B, shorter than A's batch, waits while A is forced");

                final CompletableFuture<Long> third = writer.append(SEGMENT, a + b, data(SEGMENT, a + b, c));
                TestLogs.awaitTrue(() -> writer.stats().batches() == batchesBefore + 2, "B and C written as one batch");
                TestLogs.awaitTrue(() -> started.get() == 2, "the second batch's force in flight beside the first");
                assertEquals(payloadBefore + a + b + c, writer.stats().payloadBytes(), "the second batch holds B and C");
                assertFalse(first.isDone() || second.isDone() || third.isDone(), "nothing completes before the first force returns");

                releaseFirst.release();
                assertEquals(0L, first.get(10, TimeUnit.SECONDS));
                assertEquals((long) a, second.get(10, TimeUnit.SECONDS));
                assertEquals((long) a + b, third.get(10, TimeUnit.SECONDS));
            } finally {
                // An assertion that failed must not leave the force held: the close waits for it.
                releaseFirst.release(100);
                hooks.forceHook = null;
            }
        }
        final RecoveredLog log = LogRecovery.builder(directory).readOnly(true).build().recover();
        assertEquals(0, log.tornTailBytes(), "torn tail bytes");
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, List.of(new Ack(SEGMENT, 0, a), new Ack(SEGMENT, a, b), new Ack(SEGMENT, a + b, c)));
        long length = -1;
        for (final RecoveredSegment segment : log.liveSegments()) {
            if (segment.id() == SEGMENT) {
                length = segment.length();
            }
        }
        assertEquals((long) a + b + c, length);
    }
}
