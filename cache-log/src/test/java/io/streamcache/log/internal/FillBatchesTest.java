package io.streamcache.log.internal;

import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.WriterStats;
import io.streamcache.log.testing.TestLogs;
import io.streamcache.log.testing.TestLogs.Ack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LogConfig#fillBatches()}: under {@link DurabilityPolicy#NEVER} a batch of asynchronous
 * appends waits to fill (up to a maxDelay of an hour here, so that nothing but the rule under
 * test writes it), and whatever someone waits for (a force, a synchronous append, a create, the
 * close) is written at once with everything before it.
 */
@Timeout(60)
class FillBatchesTest {
    private static final Duration HOUR = Duration.ofHours(1);

    @TempDir
    Path directory;

    private LogConfig.Builder config() {
        return TestLogs.small(directory).durability(DurabilityPolicy.NEVER).fillBatches(true).maxDelay(HOUR);
    }

    @Test
    void shouldBeOffByDefaultAndKeptByToBuilder() {
        assertFalse(LogConfig.builder(directory).build().fillBatches());
        assertTrue(config().build().toBuilder().build().fillBatches());
    }

    @Test
    void shouldWriteAppendsThatCameApartInOneBatchAtTheForce() throws Exception {
        try (LogDirectory logDirectory = LogDirectory.open(config().build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final List<LogRequest> appends = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                appends.add(writer.append(1, i * 100L, data(1, i * 100L, 100)));
                // Time for the writer to write each append on its own, as it does without fillBatches.
                Thread.sleep(20);
            }
            assertEquals(0, writer.stats().batches(), "nobody waits for these appends: the batch waits to fill");
            writer.force().get(10, TimeUnit.SECONDS);
            for (int i = 0; i < appends.size(); i++) {
                assertEquals(i * 100L, appends.get(i).get(10, TimeUnit.SECONDS));
            }
            final WriterStats stats = writer.stats();
            assertEquals(1, stats.batches(), () -> "eight appends, one write: " + stats);
        }
        final List<Ack> acks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            acks.add(new Ack(1, i * 100L, 100));
        }
        TestLogs.assertContains(directory, acks);
    }

    @Test
    void shouldWriteAtOnceWhatSomeoneWaitsFor() throws Exception {
        try (LogDirectory logDirectory = LogDirectory.open(config().build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final LogRequest before = writer.append(1, 0, data(1, 0, 100));
            // A synchronous append: its thread waits, so the batch holding it is written now.
            final LogRequest pooled = writer.appendPooled(writer.healthyEpoch(), 1, 100, data(1, 100, 100), null,
                LogCommitHandler.NONE);
            pooled.awaitDone();
            assertNull(pooled.failureCause());
            pooled.released();
            assertEquals(0L, before.get(10, TimeUnit.SECONDS), "the append before it went out with it");

            final LogRequest after = writer.append(1, 200, data(1, 200, 100));
            // A create is waited for too.
            writer.create(writer.healthyEpoch(), 2, "second", null).get(10, TimeUnit.SECONDS);
            assertEquals(200L, after.get(10, TimeUnit.SECONDS));
        }
        TestLogs.assertContains(directory, List.of(new Ack(1, 0, 100), new Ack(1, 100, 100), new Ack(1, 200, 100)));
    }

    @Test
    void shouldWriteAWaitingBatchAtClose() throws Exception {
        final LogRequest append;
        try (LogDirectory logDirectory = LogDirectory.open(config().build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            append = writer.append(1, 0, data(1, 0, 4000));
        }
        assertEquals(0L, append.get(10, TimeUnit.SECONDS));
        TestLogs.assertContains(directory, List.of(new Ack(1, 0, 4000)));
    }

    @Test
    void shouldWriteABatchOnceItIsFullWithoutWaitingForMaxDelay() throws Exception {
        final int batch = TestLogs.BATCH;
        try (LogDirectory logDirectory = LogDirectory.open(config().build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final List<LogRequest> appends = new ArrayList<>();
            long offset = 0;
            // More than two batches of asynchronous appends: the full ones are written without a force.
            while (offset < 2L * batch + batch / 2) {
                appends.add(writer.append(1, offset, data(1, offset, 1000)));
                offset += 1000;
            }
            // Completes within the test's timeout only if its full batch was written: maxDelay is an hour.
            appends.get(0).get(10, TimeUnit.SECONDS);
            writer.force().get(10, TimeUnit.SECONDS);
            for (final LogRequest append : appends) {
                append.get(10, TimeUnit.SECONDS);
            }
        }
    }
}
