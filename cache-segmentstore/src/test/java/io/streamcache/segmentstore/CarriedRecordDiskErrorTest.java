package io.streamcache.segmentstore;

import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.testing.TestLogs.Ack;
import io.streamcache.log.internal.recovery.LogRecovery;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.LogFailedException;
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
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Disk errors around a cut write (regression: a record straddling the cut had its head written
 * and forced by the cut write and its tail carried; the write of the tail failed, the recovery
 * zeroed only from the failed write on, the head stayed, the records written after the recovery
 * followed it, and the next open refused the log: "CRC mismatch; valid records follow").
 *
 * <p>Deterministic: the writer is held at a write (the hooks' gate) while the requests that are
 * to form one batch are queued, then disk space or forces run out at a chosen write. Each test
 * checks every request's outcome, that nothing of a failed request is in the log, that every
 * acknowledged append is, and that the real recovery opens the log without a cut.
 */
@Timeout(60)
class CarriedRecordDiskErrorTest {
    /** Forces in flight of the writers under test: 1 here, more in {@link ForcesInFlightCarriedRecordDiskErrorTest}. */
    int forcesInFlight() {
        return 1;
    }

    /** Segment whose appends all fail: none of its bytes may be in the log in the end. */
    private static final int FAILED_SEGMENT = 9;
    /** Straddles the cut: its head goes with the cut write, its tail is carried. */
    private static final int STRADDLING = 6000;

    @TempDir
    Path directory;

    private final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
    private final List<Ack> acks = new ArrayList<>();
    private long offset;
    private long straddlingOffset;

    private LogDirectory open() throws IOException {
        return LogDirectory.open(TestLogs.small(directory).forcesInFlight(forcesInFlight()).alignment(AlignmentPolicy.CUT).retryInterval(Duration.ZERO)
            .fileFactory(hooks).build());
    }

    /** Creates the segments (the real recovery replays only created ones), then a first append. */
    private void begin(final AggregatingWriter writer) throws Exception {
        writer.create(writer.healthyEpoch(), 1, "s1", null).get(10, TimeUnit.SECONDS);
        writer.create(writer.healthyEpoch(), FAILED_SEGMENT, "failed", null).get(10, TimeUnit.SECONDS);
        appendAcknowledged(writer, 300);
    }

    /** Appends to segment 1, acknowledged. */
    private void appendAcknowledged(final AggregatingWriter writer, final int length) throws Exception {
        assertEquals(offset, writer.append(1, offset, data(1, offset, length)).get(10, TimeUnit.SECONDS));
        acks.add(new Ack(1, offset, length));
        offset += length;
    }

    /** Holds the writer in the write of a lone append to segment 1 (a page of its own), acknowledged once released. */
    private CompletableFuture<Long> holdWriter(final AggregatingWriter writer) throws InterruptedException {
        hooks.gate = new Semaphore(0);
        final CompletableFuture<Long> held = writer.append(1, offset, data(1, offset, 100));
        acks.add(new Ack(1, offset, 100));
        offset += 100;
        TestLogs.awaitTrue(() -> hooks.gateWaiting.get() == 1, "the writer waits at the gate");
        return held;
    }

    private void releaseWriter() {
        final Semaphore gate = hooks.gate;
        hooks.gate = null;
        gate.release(1_000);
    }

    /**
     * An append whose force began before the one that fails: acknowledged with one force at a
     * time. With several in flight its force may have run while the failing one ran, and then it
     * fails with the others (a force that overlapped a failed one proves nothing): it is then
     * taken out of the acknowledged ones.
     *
     * @return whether it was acknowledged.
     */
    private boolean acknowledgedUnlessOverlapped(final CompletableFuture<Long> future, final long expected, final Ack ack)
        throws Exception {
        if (forcesInFlight() == 1) {
            assertEquals(expected, future.get(10, TimeUnit.SECONDS));
            return true;
        }
        try {
            assertEquals(expected, future.get(10, TimeUnit.SECONDS));
            return true;
        } catch (final ExecutionException e) {
            assertInstanceOf(LogFailedException.class, e.getCause());
            acks.remove(ack);
            return false;
        }
    }

    private static Throwable failure(final CompletableFuture<Long> future) {
        final ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
        assertInstanceOf(LogFailedException.class, e.getCause());
        return e.getCause();
    }

    private static void assertFailedWith(final CompletableFuture<Long> future, final String message) {
        final Throwable failure = failure(future);
        assertInstanceOf(IOException.class, failure.getCause());
        assertEquals(message, failure.getCause().getMessage());
    }

    /** The log as the stores open it: the real recovery, read-only, finds every record and no torn tail. */
    private void assertReopensWhole() throws IOException {
        final RecoveredLog log = LogRecovery.builder(directory).readOnly(true).build().recover();
        assertEquals(0, log.tornTailBytes(), "torn tail bytes");
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        TestLogs.assertAlignedWrites(hooks);
        for (final TestLogScanner.Record record : TestLogScanner.records(directory)) {
            assertFalse(record.type() == LogRecordDescriptor.TYPE_DATA && record.segmentId() == FAILED_SEGMENT,
                () -> "a failed request's record is in the log: " + record);
        }
    }

    /** Recovers after the error and appends after it: the new records follow the acknowledged ones, nothing torn between. */
    private void recoverAndAppend(final AggregatingWriter writer) throws Exception {
        assertTrue(writer.isFailed());
        writer.recover().get(10, TimeUnit.SECONDS);
        assertFalse(writer.isFailed());
        for (int i = 0; i < 3; i++) {
            appendAcknowledged(writer, 900 + 500 * i);
        }
    }

    @Test
    void shouldZeroTheHeadOfACarriedRecordWhenTheWriteOfItsTailFails() throws Exception {
        try (LogDirectory logDirectory = open(); AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            begin(writer);
            final CompletableFuture<Long> held = holdWriter(writer);
            // One batch: an acknowledged record, then one that straddles the page (cut there).
            final CompletableFuture<Long> before = writer.append(1, offset, data(1, offset, 1000));
            final CompletableFuture<Long> straddling = writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, STRADDLING));
            // The held write and the cut write have room; the write of the carried tail does not.
            hooks.space.set(2L * PAGE_LENGTH);
            releaseWriter();
            assertEquals(offset - 100, held.get(10, TimeUnit.SECONDS));
            assertEquals(offset, before.get(10, TimeUnit.SECONDS), "written and forced whole by the cut write");
            acks.add(new Ack(1, offset, 1000));
            offset += 1000;
            assertFailedWith(straddling, "No space left on device");
            hooks.space.set(Long.MAX_VALUE);
            recoverAndAppend(writer);
        }
        assertReopensWhole();
    }

    @Test
    void shouldZeroTheHeadOfACarriedRecordWhenTheForceOfItsTailFails() throws Exception {
        try (LogDirectory logDirectory = open(); AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            begin(writer);
            final CompletableFuture<Long> held = holdWriter(writer);
            final CompletableFuture<Long> before = writer.append(1, offset, data(1, offset, 1000));
            final CompletableFuture<Long> straddling = writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, STRADDLING));
            // The held write's force and the cut write's force succeed; the carried tail is written, its force fails.
            hooks.forcesLeft.set(2);
            releaseWriter();
            final Ack heldAck = acks.get(acks.size() - 1);
            final boolean heldAcknowledged = acknowledgedUnlessOverlapped(held, heldAck.offset(), heldAck);
            final Ack beforeAck = new Ack(1, offset, 1000);
            acks.add(beforeAck);
            if (acknowledgedUnlessOverlapped(before, offset, beforeAck)) {
                offset += 1000;
            } else if (!heldAcknowledged) {
                // Both failed: segment 1 continues where the held append was to go.
                offset -= 100;
            }
            assertFailedWith(straddling, "Input/output error");
            // The whole record is in the file for now (its tail's write went through).
            assertTrue(TestLogScanner.records(directory).stream()
                .anyMatch(r -> r.type() == LogRecordDescriptor.TYPE_DATA && r.segmentId() == FAILED_SEGMENT));
            hooks.forcesLeft.set(Long.MAX_VALUE);
            recoverAndAppend(writer);
        }
        assertReopensWhole();
    }

    @Test
    void shouldZeroTheWholeCutWriteWhenItFails() throws Exception {
        try (LogDirectory logDirectory = open(); AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            begin(writer);
            final CompletableFuture<Long> held = holdWriter(writer);
            final CompletableFuture<Long> first = writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, 1000));
            final CompletableFuture<Long> straddling = writer.append(FAILED_SEGMENT, 1000, data(FAILED_SEGMENT, 1000, STRADDLING));
            // The held write's force succeeds; the cut write is written, its force fails.
            hooks.forcesLeft.set(1);
            releaseWriter();
            final Ack heldAck = acks.get(acks.size() - 1);
            if (!acknowledgedUnlessOverlapped(held, heldAck.offset(), heldAck)) {
                offset -= 100;
            }
            assertFailedWith(first, "Input/output error");
            assertFailedWith(straddling, "Input/output error");
            hooks.forcesLeft.set(Long.MAX_VALUE);
            recoverAndAppend(writer);
        }
        assertReopensWhole();
    }

    @Test
    void shouldZeroTheHeadOfACarriedRecordWhenTheNextCutWriteFails() throws Exception {
        try (LogDirectory logDirectory = open(); AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            begin(writer);
            final CompletableFuture<Long> held = holdWriter(writer);
            final CompletableFuture<Long> before = writer.append(1, offset, data(1, offset, 1000));
            final CompletableFuture<Long> straddling = writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, STRADDLING));
            // Let the held write through, hold the cut write: what is queued meanwhile joins the carried tail.
            final int writes = hooks.writes.size();
            hooks.gate.release(1);
            TestLogs.awaitTrue(() -> hooks.writes.size() == writes + 1 && hooks.gateWaiting.get() == 1, "the cut write waits");
            final CompletableFuture<Long> next = writer.append(FAILED_SEGMENT, STRADDLING, data(FAILED_SEGMENT, STRADDLING, 5000));
            // The held write and the first cut write have room; the second cut write does not.
            hooks.space.set(PAGE_LENGTH);
            releaseWriter();
            held.get(10, TimeUnit.SECONDS);
            assertEquals(offset, before.get(10, TimeUnit.SECONDS));
            acks.add(new Ack(1, offset, 1000));
            offset += 1000;
            assertFailedWith(straddling, "No space left on device");
            assertFailedWith(next, "No space left on device");
            hooks.space.set(Long.MAX_VALUE);
            recoverAndAppend(writer);
        }
        assertReopensWhole();
    }

    /** Lone appends (a page each) until the next one starts at or past {@code position} of the file. */
    private void fillTo(final AggregatingWriter writer, final long position) throws Exception {
        while (true) {
            final List<TestLogScanner.Record> records = TestLogScanner.records(directory);
            final TestLogScanner.Record last = records.get(records.size() - 1);
            if (last.fileNumber() != records.get(0).fileNumber()) {
                throw new AssertionError("rolled while filling: " + last);
            }
            if ((last.position() & -PAGE_LENGTH) + PAGE_LENGTH >= position) {
                return;
            }
            appendAcknowledged(writer, 2000);
        }
    }

    @Test
    void shouldZeroTheHeadOfACarriedRecordWhenTheRollsWriteOfItsTailFails() throws Exception {
        try (LogDirectory logDirectory = open(); AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            begin(writer);
            fillTo(writer, TestLogs.FILE - 12 * PAGE_LENGTH);
            final CompletableFuture<Long> held = holdWriter(writer);
            final CompletableFuture<Long> before = writer.append(1, offset, data(1, offset, 1000));
            final CompletableFuture<Long> straddling = writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, STRADDLING));
            final int writes = hooks.writes.size();
            hooks.gate.release(1);
            TestLogs.awaitTrue(() -> hooks.writes.size() == writes + 1 && hooks.gateWaiting.get() == 1, "the cut write waits");
            // Does not fit after the carried tail: the writer writes the tail padded, then rolls.
            final CompletableFuture<Long> rolling = writer.append(FAILED_SEGMENT, STRADDLING,
                data(FAILED_SEGMENT, STRADDLING, 10 * PAGE_LENGTH));
            hooks.space.set(PAGE_LENGTH);
            releaseWriter();
            held.get(10, TimeUnit.SECONDS);
            assertEquals(offset, before.get(10, TimeUnit.SECONDS));
            acks.add(new Ack(1, offset, 1000));
            offset += 1000;
            assertFailedWith(straddling, "No space left on device");
            assertFailedWith(rolling, "No space left on device");
            assertEquals(0, writer.stats().filesRolled());
            hooks.space.set(Long.MAX_VALUE);
            recoverAndAppend(writer);
            appendAcknowledged(writer, 10 * PAGE_LENGTH);
            assertEquals(1, writer.stats().filesRolled());
        }
        assertReopensWhole();
    }

    @Test
    void shouldAcknowledgeACarriedRecordOnceWhenTheRollAfterItsTailFails() throws Exception {
        try (LogDirectory logDirectory = open(); AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            begin(writer);
            fillTo(writer, TestLogs.FILE - 12 * PAGE_LENGTH);
            final CompletableFuture<Long> held = holdWriter(writer);
            final CompletableFuture<Long> before = writer.append(1, offset, data(1, offset, 1000));
            straddlingOffset = offset + 1000;
            final CompletableFuture<Long> straddling = writer.append(1, straddlingOffset, data(1, straddlingOffset, STRADDLING));
            final int writes = hooks.writes.size();
            hooks.gate.release(1);
            TestLogs.awaitTrue(() -> hooks.writes.size() == writes + 1 && hooks.gateWaiting.get() == 1, "the cut write waits");
            final CompletableFuture<Long> rolling = writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, 10 * PAGE_LENGTH));
            // The carried tail is written padded and forced; the next file cannot be created.
            hooks.failOpens = true;
            releaseWriter();
            held.get(10, TimeUnit.SECONDS);
            assertEquals(offset, before.get(10, TimeUnit.SECONDS));
            acks.add(new Ack(1, offset, 1000));
            assertEquals(straddlingOffset, straddling.get(10, TimeUnit.SECONDS), "its tail is durable: acknowledged");
            acks.add(new Ack(1, straddlingOffset, STRADDLING));
            offset = straddlingOffset + STRADDLING;
            assertFailedWith(rolling, "No space left on device");
            hooks.failOpens = false;
            recoverAndAppend(writer);
            assertEquals(1, writer.stats().filesRolled());
        }
        assertReopensWhole();
        final long copies = TestLogScanner.records(directory).stream()
            .filter(r -> r.segmentId() == 1 && r.segmentOffset() == straddlingOffset).count();
        assertEquals(1, copies, "the carried record is in the log once");
    }
}
