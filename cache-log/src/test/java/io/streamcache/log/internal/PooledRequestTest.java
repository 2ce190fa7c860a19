package io.streamcache.log.internal;

import io.streamcache.log.testing.Closer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheClosedException;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pooled log requests ({@link AggregatingWriter#appendPooled}, {@link PooledRequests}): a request
 * is reused only once the completion thread moved past it, never while the writer or the
 * completion thread can still reach it.
 */
@Timeout(120)
class PooledRequestTest {
    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    /** An 8-byte payload naming its segment and offset, so a handler can check a request against its data. */
    private static ByteBuf payload(final int segment, final long offset) {
        final ByteBuf data = Unpooled.buffer(16);
        data.writeInt(segment).writeInt((int) offset).writeLong(offset);
        return data;
    }

    private static long await(final LogRequest request) {
        request.awaitDone();
        final Throwable failure = request.failureCause();
        if (failure != null) {
            throw new AssertionError("append failed", failure);
        }
        return request.segmentOffset();
    }

    /**
     * The completion list's stub is the last completed request: it is not free when it
     * completes, and becomes free (and is reused) once the next request completed.
     */
    @Test
    void shouldReuseARequestOnlyOnceTheCompletionThreadMovedPastIt() throws Exception {
        try (LogDirectory logDirectory = LogDirectory.open(LogConfig.builder(directory).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory, LogRecordListener.NONE, RecoveredLog.empty())) {
            writer.create(writer.healthyEpoch(), 1, "s", null).get(30, TimeUnit.SECONDS);
            final LogRequest first = writer.appendPooled(writer.healthyEpoch(), 1, 0, payload(1, 0), null, LogCommitHandler.NONE);
            assertTrue(first.isPooled());
            assertEquals(0, await(first));
            // Done, but still the completion list's stub: the writer links the next request to it.
            assertFalse(first.isFree());
            assertThrows(IllegalStateException.class,
                () -> first.reuse(1, 16, payload(1, 16), null, LogCommitHandler.NONE, 0), "reuse of a request the log still reaches");
            final LogRequest second = writer.appendPooled(writer.healthyEpoch(), 1, 16, payload(1, 16), null, LogCommitHandler.NONE);
            assertNotSame(first, second);
            assertEquals(16, await(second));
            // The completion thread moved past the first before it completed the second.
            assertTrue(first.isFree());
            assertFalse(second.isFree());
            final LogRequest third = writer.appendPooled(writer.healthyEpoch(), 1, 32, payload(1, 32), null, LogCommitHandler.NONE);
            assertSame(first, third);
            assertEquals(32, await(third));
            assertTrue(second.isFree());
            // Its future side is never completed: it is reused.
            assertThrows(UnsupportedOperationException.class, () -> third.complete(1L));
        }
    }

    @Test
    void shouldReportAFailureAndFreeTheRequestItNeverQueued() throws Exception {
        final LogDirectory logDirectory = LogDirectory.open(LogConfig.builder(directory).build());
        try (logDirectory) {
            final AggregatingWriter writer = AggregatingWriter.start(logDirectory, LogRecordListener.NONE, RecoveredLog.empty());
            writer.create(writer.healthyEpoch(), 1, "s", null).get(30, TimeUnit.SECONDS);
            final long epoch = writer.healthyEpoch();
            final LogRequest done = writer.appendPooled(epoch, 1, 0, payload(1, 0), null, LogCommitHandler.NONE);
            assertEquals(0, await(done));
            writer.close();
            assertThrows(CacheClosedException.class,
                () -> writer.appendPooled(epoch, 1, 16, payload(1, 16), null, LogCommitHandler.NONE));
            // The rejected request was freed: the thread's pool still has a free one.
            final LogRequest next = PooledRequests.current().take();
            assertTrue(next.isFree());
            assertNull(next.data());
        }
    }

    /**
     * The store's synchronous durable append allocates no request on the appending thread: its
     * allocation over 2,000 appends (after as many to warm up) is far below one request (~80 B)
     * per append. (A contended segment lock may allocate a queue node now and then, hence a
     * bound rather than zero.)
     */
    /**
     * 16 threads append synchronously with pooled requests to segments of their own while the
     * commit handler checks every request against its data twice, with a pause between: a request
     * reused while the writer or the completion thread could still reach it would change under
     * the handler (poisoned fields), carry another append's data, or complete with another
     * offset. Each thread uses at most its two requests.
     */
    @Test
    void shouldNeverReuseARequestTheLogStillReachesUnderContention() throws Exception {
        final int threads = 16;
        final int appends = 1_500;
        final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        final AtomicLong committed = new AtomicLong();
        final LogCommitHandler checking = new LogCommitHandler() {
            @Override
            public void committed(final LogRequest request) {
                final int segment = request.segmentId();
                final long offset = request.segmentOffset();
                final ByteBuf data = request.data();
                check(request, data, segment, offset);
                if ((offset & 0x70) == 0) {
                    // Give a too-early reuse the time to happen.
                    Thread.yield();
                }
                if (request.segmentId() != segment || request.segmentOffset() != offset || request.data() != data
                    || request.isDone()) {
                    errors.add(new AssertionError("request changed while the completion thread applied it: " + request));
                }
                committed.incrementAndGet();
            }

            @Override
            public void failed(final LogRequest request, final Throwable cause) {
                errors.add(cause);
            }

            private void check(final LogRequest request, final ByteBuf data, final int segment, final long offset) {
                if (data == null || data.getInt(data.readerIndex()) != segment || data.getLong(data.readerIndex() + 8) != offset
                    || request.isFree()) {
                    errors.add(new AssertionError("request does not match its data: " + request));
                }
            }
        };
        try (LogDirectory logDirectory = LogDirectory.open(LogConfig.builder(directory).fileLength(4 << 20).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory, LogRecordListener.NONE, RecoveredLog.empty())) {
            final CyclicBarrier start = new CyclicBarrier(threads);
            final List<Thread> producers = new ArrayList<>();
            for (int t = 1; t <= threads; t++) {
                final int segment = t;
                producers.add(new Thread(() -> {
                    try {
                        writer.create(writer.healthyEpoch(), segment, "s" + segment, null).get(30, TimeUnit.SECONDS);
                        final Set<LogRequest> used = Collections.newSetFromMap(new IdentityHashMap<>());
                        start.await(30, TimeUnit.SECONDS);
                        long offset = 0;
                        for (int i = 0; i < appends; i++) {
                            final LogRequest request = writer.appendPooled(writer.healthyEpoch(), segment, offset, payload(segment, offset),
                                null, checking);
                            used.add(request);
                            assertEquals(offset, await(request));
                            assertNull(request.data());
                            offset += 16;
                        }
                        assertTrue(used.size() <= 2, "thread used " + used.size() + " requests");
                    } catch (final Throwable e) {
                        errors.add(e);
                    }
                }, "pooled-" + t));
            }
            producers.forEach(Thread::start);
            for (final Thread producer : producers) {
                producer.join();
            }
        }
        assertEquals(List.of(), errors);
        assertEquals((long) threads * appends, committed.get());
    }
}
