package io.streamcache.segmentstore;

import io.streamcache.core.CacheClosedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hand-off of reads to the store's read-timeouts thread, with its reused carriers: every
 * read handed off gets its own outcome, from many threads at once, with more reads in flight
 * than the pool holds; a close fails what is queued and what is still in flight.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HandedOffReadsTest {
    private final ScheduledThreadPoolExecutor thread = new ScheduledThreadPoolExecutor(1);
    private final ExecutorService callers = Executors.newFixedThreadPool(4);
    private final IsolationCounters counters = new IsolationCounters();
    private final HandedOffReads reads = new HandedOffReads("test", counters, thread);

    @AfterEach
    void stop() {
        thread.shutdownNow();
        callers.shutdownNow();
    }

    private static final HandedOffReads.Issuer AT_ONCE = (name, segment, offset, maxLength, timeoutNanos, budget) ->
        CompletableFuture.completedFuture(ReadResult.empty(name, offset, ReadStatus.END_OF_DATA));

    @Test
    void shouldGiveEveryReadItsOwnOutcomeFromManyThreadsWithMoreInFlightThanThePool() throws Exception {
        final int perCaller = HandedOffReads.POOL;
        final CompletableFuture<Void> gate = new CompletableFuture<>();
        // Half the reads complete later, on the gate's release: 2 x POOL in flight at once.
        final HandedOffReads.Issuer later = (name, segment, offset, maxLength, timeoutNanos, budget) ->
            gate.thenApply(v -> ReadResult.empty(name, offset, ReadStatus.END_OF_DATA));
        final CyclicBarrier start = new CyclicBarrier(4);
        final List<Future<List<CompletableFuture<ReadResult>>>> handed = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            final int caller = c;
            handed.add(callers.submit(() -> {
                final List<CompletableFuture<ReadResult>> mine = new ArrayList<>();
                start.await();
                for (int i = 0; i < perCaller; i++) {
                    final long offset = (long) caller * perCaller + i;
                    mine.add(reads.handOff(i % 2 == 0 ? later : AT_ONCE, "segment-" + caller, null, offset, 100, 0L, null));
                }
                return mine;
            }));
        }
        final List<List<CompletableFuture<ReadResult>>> all = new ArrayList<>();
        for (final Future<List<CompletableFuture<ReadResult>>> f : handed) {
            all.add(f.get(60, TimeUnit.SECONDS));
        }
        // The immediate ones complete while the others wait.
        for (int c = 0; c < 4; c++) {
            for (int i = 1; i < perCaller; i += 2) {
                assertEquals((long) c * perCaller + i, all.get(c).get(i).get(60, TimeUnit.SECONDS).offset());
            }
        }
        gate.complete(null);
        for (int c = 0; c < 4; c++) {
            for (int i = 0; i < perCaller; i++) {
                final ReadResult result = all.get(c).get(i).get(60, TimeUnit.SECONDS);
                assertEquals((long) c * perCaller + i, result.offset(), "caller " + c + " read " + i);
                assertEquals("segment-" + c, result.segment());
            }
        }
        assertEquals(4L * perCaller, counters.snapshot(0, 0, 0, 0, 0).readsHandedOff());
        // Reused carriers after the burst: a second round gets its own outcomes too.
        for (int i = 0; i < 3 * HandedOffReads.POOL; i++) {
            assertEquals(i, reads.handOff(AT_ONCE, "again", null, i, 1, 0L, null).get(60, TimeUnit.SECONDS).offset());
        }
    }

    @Test
    void shouldFailTheReadsQueuedAndInFlightWhenTheStoreCloses() throws Exception {
        final CountDownLatch running = new CountDownLatch(1);
        final CountDownLatch hold = new CountDownLatch(1);
        final CompletableFuture<ReadResult> never = new CompletableFuture<>();
        // The thread is busy with the first read, so the second stays queued; the first issues a
        // read that is still in flight at the close.
        final HandedOffReads.Issuer blocking = (name, segment, offset, maxLength, timeoutNanos, budget) -> {
            running.countDown();
            try {
                hold.await();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return never;
        };
        final CompletableFuture<ReadResult> inFlight = reads.handOff(blocking, "s", null, 0, 1, 0L, null);
        assertTrue(running.await(60, TimeUnit.SECONDS));
        final CompletableFuture<ReadResult> queued = reads.handOff(AT_ONCE, "s", null, 1, 1, 0L, null);
        thread.shutdown();
        hold.countDown();
        reads.failPending();
        assertInstanceOf(CacheClosedException.class, assertThrows(ExecutionException.class, () -> inFlight.get(60, TimeUnit.SECONDS)).getCause());
        // Queued behind the first: either failed by the close or, had the thread reached it, read.
        try {
            assertEquals(1, queued.get(60, TimeUnit.SECONDS).offset());
        } catch (final ExecutionException e) {
            assertInstanceOf(CacheClosedException.class, e.getCause());
        }
        // After the thread's end a hand-off fails at once rather than stay pending.
        thread.awaitTermination(60, TimeUnit.SECONDS);
        final CompletableFuture<ReadResult> late = reads.handOff(AT_ONCE, "s", null, 2, 1, 0L, null);
        assertInstanceOf(CacheClosedException.class, assertThrows(ExecutionException.class, () -> late.get(60, TimeUnit.SECONDS)).getCause());
    }

    @Test
    void shouldFailAReadWhoseIssueThrowsWithItsException() {
        final IllegalStateException thrown = new IllegalStateException("the read's own failure");
        final HandedOffReads.Issuer failing = (name, segment, offset, maxLength, timeoutNanos, budget) -> {
            throw thrown;
        };
        assertSame(thrown, assertThrows(ExecutionException.class, () -> reads.handOff(failing, "s", null, 0, 1, 0L, null)
            .get(60, TimeUnit.SECONDS)).getCause());
        final HandedOffReads.Issuer failed = (name, segment, offset, maxLength, timeoutNanos, budget) ->
            CompletableFuture.failedFuture(thrown);
        assertSame(thrown, assertThrows(ExecutionException.class, () -> reads.handOff(failed, "s", null, 0, 1, 0L, null)
            .get(60, TimeUnit.SECONDS)).getCause());
    }
}
