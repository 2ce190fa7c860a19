package io.streamcache.log.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.DirectIoMode;
import io.streamcache.log.LogFile;
import io.streamcache.log.LogFileFactory;
import io.streamcache.log.testing.TestLogs;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Synchronous producers under contention ({@link AggregatingWriter#appendPooled} and
 * {@link LogRequest#awaitDone()}, as the store's synchronous append uses them): every append
 * returns only once its record's last byte is forced (EVERY_BATCH), its commit handler ran
 * before it returned, the handlers ran in each segment's offset order, and no producer waits
 * forever (a lost wake would leave one parked: {@code awaitDone} has no timeout). Randomized:
 * payload lengths, pauses between appends; over the alignment policies and forces in flight; the
 * seed is in the failure message.
 *
 * <p>How "forced" is observed: every payload ends with a marker and a token unique to the
 * append; the test's {@link LogFile} scans each write for tokens and, once a force of that file
 * returns, marks forced every token written to it before the force began. A token seen forced
 * means the record's last byte was written, then forced (records are written in order, so the
 * whole record was).
 */
@Timeout(180)
class SynchronousAcknowledgementTest {
    private static final long MARKER = 0x7A3C_5E91_D24B_68F1L;
    private static final int TRAILER = 16;

    @TempDir
    Path directory;

    @ParameterizedTest(name = "producers={0}, forcesInFlight={1}, alignment={2}, seed={3}")
    @CsvSource({
        "24, 1, ADAPTIVE, 1",
        "24, 3, ADAPTIVE, 2",
        "8, 1, PAD, 3",
        "40, 2, CUT, 4",
    })
    void shouldAcknowledgeOnlyForcedAppendsAndWakeEveryProducer(final int producers, final int forcesInFlight,
                                                               final AlignmentPolicy alignment, final long seed) throws Exception {
        final TokenFiles files = new TokenFiles();
        final int appendsPerProducer = 150;
        final Queue<String> violations = new ConcurrentLinkedQueue<>();
        final long[] committedEnd = new long[producers + 1];
        final AtomicLong committed = new AtomicLong();
        final LogCommitHandler handler = new LogCommitHandler() {
            @Override
            public void committed(final LogRequest request) {
                // Completion thread only: plain array.
                final int segment = request.segmentId();
                if (request.segmentOffset() != committedEnd[segment]) {
                    violations.add("segment " + segment + " committed offset " + request.segmentOffset() + " after end "
                        + committedEnd[segment]);
                }
                committedEnd[segment] = request.segmentOffset() + request.length();
                committed.incrementAndGet();
            }

            @Override
            public void failed(final LogRequest request, final Throwable cause) {
                violations.add("failed: " + request + ": " + cause);
            }
        };
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).fileLength(256 << 10).alignment(alignment)
            .forcesInFlight(forcesInFlight).fileFactory(files).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            for (int segment = 1; segment <= producers; segment++) {
                writer.create(writer.healthyEpoch(), segment, "s" + segment, null).get(30, TimeUnit.SECONDS);
            }
            final CountDownLatch start = new CountDownLatch(1);
            final List<Thread> threads = new ArrayList<>();
            for (int p = 1; p <= producers; p++) {
                final int segment = p;
                final SplittableRandom random = new SplittableRandom(seed * 1_000 + p);
                final Thread thread = new Thread(() -> {
                    try {
                        start.await();
                        long offset = 0;
                        for (int i = 0; i < appendsPerProducer; i++) {
                            final long token = ((long) segment << 32) | i;
                            final int length = TRAILER + random.nextInt(random.nextInt(8) == 0 ? 20_000 : 600);
                            final ByteBuf data = payload(length, token);
                            LogRequest request;
                            while (true) {
                                try {
                                    request = writer.appendPooled(writer.healthyEpoch(), segment, offset, data, null, handler);
                                    break;
                                } catch (final io.streamcache.log.LogQueueFullException e) {
                                    writer.awaitRoom();
                                }
                            }
                            request.awaitDone();
                            if (request.failureCause() != null) {
                                violations.add("append " + token + " failed: " + request.failureCause());
                                return;
                            }
                            if (!files.forced.contains(token)) {
                                violations.add("append of segment " + segment + " #" + i + " acknowledged before its record was forced");
                            }
                            if (committedEnd[segment] < offset + length) {
                                // Read racily: the handler's write happened before the outcome this thread read.
                                violations.add("append of segment " + segment + " #" + i + " returned before its handler ran");
                            }
                            offset += length;
                            final int pause = random.nextInt(16);
                            if (pause == 0) {
                                LockSupport.parkNanos(random.nextInt(200_000));
                            } else if (pause == 1) {
                                Thread.yield();
                            }
                        }
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (final RuntimeException | Error e) {
                        violations.add("producer " + segment + ": " + e);
                    }
                }, "producer-" + p);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
            start.countDown();
            for (final Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(120));
                assertFalse(thread.isAlive(), () -> thread.getName() + " never returned from an append (a lost wake?), seed " + seed
                    + "; writer " + writer.stats());
            }
            assertTrue(violations.isEmpty(), () -> "seed " + seed + ": " + violations.size() + " violations, first "
                + List.copyOf(violations).subList(0, Math.min(5, violations.size())));
            assertEquals((long) producers * appendsPerProducer, committed.get(), "appends committed");
        }
    }

    /** {@code length} bytes of filler, then the marker and the token, in the last 16 bytes. */
    private static ByteBuf payload(final int length, final long token) {
        final ByteBuf data = Unpooled.buffer(length);
        data.writeZero(length - TRAILER);
        data.writeLongLE(MARKER);
        data.writeLongLE(token);
        return data;
    }

    /** Log files that record which tokens were written to them, and which a returned force covers: thread-safe. */
    private static final class TokenFiles implements LogFileFactory {
        final Set<Long> forced = ConcurrentHashMap.newKeySet();
        private final LogFileFactory delegate = FileChannelLogFile.factory(DirectIoMode.OFF);

        @Override
        public LogFile open(final Path path) throws IOException {
            final LogFile file = delegate.open(path);
            return new LogFile() {
                /** Tokens written to this file, in write order; guarded by itself, as the image. */
                private final List<Long> written = new ArrayList<>();
                /**
                 * What was written where: a trailer may straddle two writes (a cut write ends at a
                 * page boundary inside a record, the next write carries the rest), so the scan
                 * runs over the file's bytes around each write, not over the write alone.
                 */
                private byte[] image = new byte[0];

                @Override
                public void write(final ByteBuffer source, final long position) throws IOException {
                    final ByteBuffer copy = source.duplicate();
                    final int length = copy.remaining();
                    file.write(source, position);
                    synchronized (written) {
                        final int end = Math.toIntExact(position + length);
                        if (image.length < end) {
                            image = java.util.Arrays.copyOf(image, Math.max(end, image.length * 2));
                        }
                        copy.get(image, (int) position, length);
                        final ByteBuffer view = ByteBuffer.wrap(image).order(ByteOrder.LITTLE_ENDIAN);
                        for (int i = Math.max(0, (int) position - TRAILER); i + TRAILER <= end; i++) {
                            if (view.getLong(i) == MARKER) {
                                written.add(view.getLong(i + 8));
                            }
                        }
                    }
                }

                @Override
                public void force() throws IOException {
                    final int before;
                    synchronized (written) {
                        before = written.size();
                    }
                    file.force();
                    synchronized (written) {
                        forced.addAll(written.subList(0, before));
                    }
                }

                @Override
                public int read(final ByteBuffer destination, final long position) throws IOException {
                    return file.read(destination, position);
                }

                @Override
                public long length() throws IOException {
                    return file.length();
                }

                @Override
                public void setLength(final long length) throws IOException {
                    file.setLength(length);
                }

                @Override
                public Path path() {
                    return file.path();
                }

                @Override
                public boolean isDirectIo() {
                    return file.isDirectIo();
                }

                @Override
                public void close() throws IOException {
                    file.close();
                }
            };
        }
    }
}
