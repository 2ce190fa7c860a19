package io.streamcache.log.internal;

import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.testing.TestLogs.Ack;
import io.streamcache.log.internal.recovery.LogRecovery;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import io.streamcache.log.LogFailedException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.alignedLength;
import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The interleaving the randomized {@link ForcesInFlightTest} found, made
 * deterministic: a repair moves the log's end back into the middle of a page, and the next
 * append does not fit in the file, so the writer rolls to the next file without writing that
 * page again. Before the fix the repair left the page as the acknowledged bytes then zeros, and
 * the roll left it so: a file that later files follow ended inside a page with zeros where a
 * record should start, and recovery refused the log as damaged.
 * <pre>
 *  file 1:  ... | fillers (one padded page each) | page P       | page P+1      | page P+2
 *                                                 [A.........][R head.........][R tail | pad]
 *               cut write [P, P+2 pages): forced, A acknowledged    ^ the write of R's tail fails (disk full)
 *  repair:  the end moves back to R's start (inside page P+1): [A's end][what the repair writes there]
 *  next:    an append too long for the rest of file 1: roll to file 2, page P+1 is not written again
 * </pre>
 * Runs with one force at a time (the default: the same path) and with forces in flight.
 */
@Timeout(60)
class RepairThenRollTest {
    private static final int SEGMENT = 1;
    /** Its one append (R) fails: none of its bytes may be in the log. */
    private static final int FAILED_SEGMENT = 9;
    /** A: acknowledged, ends inside the page where R starts. */
    private static final int A_LENGTH = 5000;
    /** R: its head is in the cut write, its tail carried to the write that fails. */
    private static final int R_LENGTH = 6000;

    /** Pages written before A: R then starts past the middle of the file. */
    private static final int PREFILLED_PAGES = 14;

    @TempDir
    Path directory;

    private final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void shouldRollCleanlyAfterARepairThatMovedTheEndIntoAPage(final int forces) throws Exception {
        repairThenRoll(forces, false);
    }

    /**
     * The same, but the first write after the repair (the page again: the acknowledged bytes and
     * a new record) fails too, with no force in flight: the second repair rewrites the failed
     * write's range after the page's durable prefix ({@link RecordBatch#zeroedAfterPrefix}), then
     * the writer rolls.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void shouldRollCleanlyAfterTheSamePageWasRepairedTwice(final int forces) throws Exception {
        repairThenRoll(forces, true);
    }

    private void repairThenRoll(final int forces, final boolean failAgain) throws Exception {
        final List<Ack> acks = new ArrayList<>();
        final long segmentLength;
        final long endMovedBackTo;
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).forcesInFlight(forces)
                 .retryInterval(Duration.ZERO).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            writer.create(writer.healthyEpoch(), SEGMENT, "s1", null).get(10, TimeUnit.SECONDS);
            writer.create(writer.healthyEpoch(), FAILED_SEGMENT, "failed", null).get(10, TimeUnit.SECONDS);

            long offset = 0;
            // Pages of file 1 filled (one padded write each) so that R starts past the middle of
            // the file: the longest append then does not fit after it.
            for (int i = 0; i < PREFILLED_PAGES - forces; i++) {
                assertEquals(offset, writer.append(SEGMENT, offset, data(SEGMENT, offset, 4000)).get(10, TimeUnit.SECONDS));
                acks.add(new Ack(SEGMENT, offset, 4000));
                offset += 4000;
            }
            // Hold the forces of one padded filler write per force in flight: the writer then
            // waits (for its force, or for a free force) and A and R gather into one batch.
            final AtomicInteger started = new AtomicInteger();
            final Semaphore release = new Semaphore(0);
            hooks.forceHook = () -> {
                started.incrementAndGet();
                try {
                    release.acquire();
                } catch (final InterruptedException e) {
                    throw new IOException(e);
                }
            };
            final List<CompletableFuture<Long>> fillers = new ArrayList<>();
            for (int i = 0; i < forces; i++) {
                fillers.add(writer.append(SEGMENT, offset, data(SEGMENT, offset, 100)));
                acks.add(new Ack(SEGMENT, offset, 100));
                offset += 100;
                final int expected = i + 1;
                TestLogs.awaitTrue(() -> started.get() == expected, "force " + expected + " held");
            }
            final long writesBefore = hooks.writes.size();
            final CompletableFuture<Long> a = writer.append(SEGMENT, offset, data(SEGMENT, offset, A_LENGTH));
            final CompletableFuture<Long> r = writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, R_LENGTH));
            // A and R are more than the cut threshold: the batch is cut after two pages, R's tail
            // carried; the disk has room for exactly those two pages, so the write of the tail fails.
            final int cut = (alignedLength(A_LENGTH) + alignedLength(R_LENGTH)) & -PAGE_LENGTH;
            assertTrue(alignedLength(A_LENGTH) < cut && alignedLength(A_LENGTH) % PAGE_LENGTH != 0,
                "R starts inside a page of the cut write");
            hooks.space.set(cut);
            hooks.forceHook = null;
            release.release(forces);
            for (final CompletableFuture<Long> filler : fillers) {
                filler.get(10, TimeUnit.SECONDS);
            }
            assertEquals(offset, a.get(10, TimeUnit.SECONDS));
            acks.add(new Ack(SEGMENT, offset, A_LENGTH));
            offset += A_LENGTH;
            final ExecutionException e = assertThrows(ExecutionException.class, () -> r.get(10, TimeUnit.SECONDS));
            assertInstanceOf(LogFailedException.class, e.getCause());
            assertTrue(writer.isFailed());
            assertEquals(writesBefore + 1, hooks.writes.size(), "one cut write of A and R's head, then the failed one");
            final long[] cutWrite = hooks.writes.get(hooks.writes.size() - 1);
            assertEquals(cut, cutWrite[1]);
            final long rStart = cutWrite[0] + alignedLength(A_LENGTH);

            hooks.space.set(Long.MAX_VALUE);
            writer.recover().get(10, TimeUnit.SECONDS);
            if (failAgain) {
                hooks.space.set(0);
                final ExecutionException again = assertThrows(ExecutionException.class,
                    () -> writer.append(FAILED_SEGMENT, 0, data(FAILED_SEGMENT, 0, 100)).get(10, TimeUnit.SECONDS));
                assertInstanceOf(LogFailedException.class, again.getCause());
                assertTrue(writer.isFailed());
                hooks.space.set(Long.MAX_VALUE);
                final int writes = hooks.writes.size();
                writer.recover().get(10, TimeUnit.SECONDS);
                final long[] repair = hooks.writes.get(writes);
                assertEquals(rStart & -PAGE_LENGTH, repair[0], "the second repair rewrites R's page from its start");
            }
            // Too long for the rest of file 1 (even from R's start): the writer rolls first.
            final int longLength = logDirectory.config().maxAppendLength();
            assertTrue(rStart + alignedLength(longLength) > TestLogs.FILE, "the long append does not fit in file 1");
            final long filesRolled = writer.stats().filesRolled();
            assertEquals(offset, writer.append(SEGMENT, offset, data(SEGMENT, offset, longLength)).get(10, TimeUnit.SECONDS));
            acks.add(new Ack(SEGMENT, offset, longLength));
            offset += longLength;
            assertEquals(filesRolled + 1, writer.stats().filesRolled(), "the long append went to a new file");
            segmentLength = offset;
            endMovedBackTo = rStart;
        }
        final RecoveredLog log = LogRecovery.builder(directory).readOnly(true).build().recover();
        assertEquals(0, log.tornTailBytes(), "torn tail bytes");
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        final Map<Integer, Long> lengths = new HashMap<>();
        for (final RecoveredSegment segment : log.liveSegments()) {
            lengths.put(segment.id(), segment.length());
        }
        assertEquals(segmentLength, lengths.get(SEGMENT));
        assertEquals(0L, lengths.get(FAILED_SEGMENT), "no byte of the failed append");
        assertNotEquals(0, firstWord(endMovedBackTo), "where the repair moved the end back: a record, not zeros");
    }

    /** The first 8 bytes of file 1 at {@code position}: 0 when zeros are there. */
    private long firstWord(final long position) throws IOException {
        try (FileChannel channel = FileChannel.open(directory.resolve(LogFileDescriptor.fileName(1)), StandardOpenOption.READ)) {
            final ByteBuffer bytes = ByteBuffer.allocate(Long.BYTES);
            channel.read(bytes, position);
            return bytes.flip().getLong();
        }
    }
}
