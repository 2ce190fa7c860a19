package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.CacheManagerStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Producers on few segments, tail readers waiting on futures, and the cache manager evicting on
 * its timer and when the cache is full, all at once; then every byte is verified.
 *
 * <pre>
 *   producers s0-0, s0-1, s0-2 --append--&gt; segment "s0" --readOrWait/get--&gt; readers s0-0, s0-1 --+
 *   producers s1-0, s1-1, s1-2 --append--&gt; segment "s1" --readOrWait/get--&gt; readers s1-0, s1-1 --+
 *                                      |                                                         |
 *                                 cache, 4 MB  &lt;-- markDurable(min reader position) ------------+
 *                                      |
 *   cache manager thread: a generation every millisecond, evicts down to 50 %; full cache: evicts on the appender
 * </pre>
 *
 * Appends are not durable until both readers of a segment are past them (the readers mark
 * them durable), so eviction only ever takes bytes that every reader has read: a reader must
 * never see NOT_CACHED, and the cache (4 MB for 2 x ~18 MB of data) must evict to make room.
 * Every record carries its producer, its sequence number and a payload derived from both, so
 * the streams the readers rebuild show any lost, duplicated, reordered or corrupted byte.
 */
class SegmentStoreConcurrencyTest {
    private static final int SEGMENTS = 2;
    private static final int PRODUCERS_PER_SEGMENT = 3;
    private static final int READERS_PER_SEGMENT = 2;
    private static final int RECORDS_PER_PRODUCER = 6_000;
    private static final int MAX_RECORD = 2_000;
    private static final int HEADER = 12;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldDeliverEveryByteToTailReadersWhileEvicting() throws Exception {
        final BlockCache cache = BlockCache.builder().capacity(4L << 20).blockLength(1024).bufferLength(128 * 1024)
            .fullRetryTimeout(Duration.ofMillis(50)).registerMBean(false).build();
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(16 * 1024)
            .appendsDurable(false)
            .cacheManager(CacheManager.builder(cache).registerMBean(false).targetUtilization(0.5).generationPeriod(Duration.ofMillis(1)))
            .build();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final List<Thread> threads = new ArrayList<>();
        final long[][][] offsets = new long[SEGMENTS][PRODUCERS_PER_SEGMENT][RECORDS_PER_PRODUCER];
        final AtomicLongArray positions = new AtomicLongArray(SEGMENTS * READERS_PER_SEGMENT);
        final byte[][][] streams = new byte[SEGMENTS][READERS_PER_SEGMENT][];
        final CountDownLatch producersDone = new CountDownLatch(SEGMENTS * PRODUCERS_PER_SEGMENT);
        try {
            for (int s = 0; s < SEGMENTS; s++) {
                store.create("s" + s);
            }
            for (int s = 0; s < SEGMENTS; s++) {
                for (int r = 0; r < READERS_PER_SEGMENT; r++) {
                    final int segment = s;
                    final int reader = r;
                    threads.add(start("reader-" + s + "-" + r, failures, () ->
                        streams[segment][reader] = tail(store, segment, reader, positions)));
                }
                for (int p = 0; p < PRODUCERS_PER_SEGMENT; p++) {
                    final int segment = s;
                    final int producer = p;
                    threads.add(start("producer-" + s + "-" + p, failures, () -> {
                        try {
                            produce(store, segment, producer, offsets[segment][producer]);
                        } finally {
                            producersDone.countDown();
                        }
                    }));
                }
            }
            assertTrue(producersDone.await(100, TimeUnit.SECONDS), "producers finished");
            for (int s = 0; s < SEGMENTS; s++) {
                store.seal("s" + s);
            }
            for (final Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(100));
            }
            assertEquals(List.of(), failures);

            for (int s = 0; s < SEGMENTS; s++) {
                final byte[] stream = streams[s][0];
                assertEquals(store.info("s" + s).length(), stream.length);
                for (int r = 1; r < READERS_PER_SEGMENT; r++) {
                    assertArrayEquals(stream, streams[s][r], "every reader of s" + s + " saw the same bytes");
                }
                verify(stream, offsets[s]);
            }
            final CacheManagerStats stats = store.cacheManager().stats();
            assertTrue(stats.evictions() > 0, "the cache had to evict: " + stats);
        } finally {
            for (final Thread thread : threads) {
                thread.interrupt();
            }
            store.close();
            cache.close();
        }
    }

    /**
     * Copying readers follow the tail of a segment while one thread appends to it: each reader
     * copies from where its last copy ended into a destination of random room (a direct
     * {@code ByteBuf} for one, a heap {@code ByteBuffer} for the other), polling at the end, until
     * the sealed end. The appends grow the entry the readers copy from in place; every byte
     * copied must be the one appended at its offset, with no NOT_CACHED (nothing is evicted).
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldCopyTheTailWhileAnotherThreadAppends() throws Exception {
        final int appends = 20_000;
        final long seed = 42;
        final BlockCache cache = TestSegments.cache(16L << 20);
        final SegmentStore store = TestSegments.store(cache, 4096);
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final long[] copiedBy = new long[2];
        try {
            store.create("c");
            final Thread appender = start("appender", failures, () -> {
                final Random random = new Random(seed);
                long length = 0;
                for (int i = 0; i < appends; i++) {
                    final int n = 1 + random.nextInt(400);
                    assertEquals(length, store.append("c", TestSegments.buffer(seed, length, n)));
                    length += n;
                }
                store.seal("c");
            });
            final List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                final int reader = r;
                readers.add(start("copier-" + r, failures, () -> {
                    final Random random = new Random(100 + reader);
                    final ByteBuf buf = Unpooled.directBuffer(8192, 8192);
                    final ByteBuffer nio = ByteBuffer.allocate(8192);
                    final byte[] got = new byte[8192];
                    long offset = 0;
                    try {
                        while (true) {
                            final int room = random.nextInt(8193);
                            final ReadStatus status;
                            final int n;
                            if (reader == 0) {
                                buf.clear().writerIndex(8192 - room);
                                status = store.read("c", offset, buf);
                                n = buf.readableBytes() - (8192 - room);
                                buf.getBytes(8192 - room, got, 0, n);
                            } else {
                                nio.clear().position(8192 - room);
                                status = store.read("c", offset, nio);
                                n = nio.position() - (8192 - room);
                                nio.position(8192 - room);
                                nio.get(got, 0, n);
                            }
                            assertTrue(status != ReadStatus.NOT_CACHED, "nothing is evicted, at offset=" + offset);
                            assertTrue(n == room || status != ReadStatus.MAX_LENGTH, "MAX_LENGTH only when full, at offset=" + offset);
                            for (int i = 0; i < n; i++) {
                                if (got[i] != TestSegments.at(seed, offset + i)) {
                                    throw new AssertionError("reader " + reader + ": wrong byte at offset=" + (offset + i));
                                }
                            }
                            offset += n;
                            if (status == ReadStatus.SEALED_END) {
                                break;
                            }
                            if (status == ReadStatus.END_OF_DATA) {
                                Thread.yield();
                            }
                        }
                        copiedBy[reader] = offset;
                    } finally {
                        buf.release();
                    }
                }));
            }
            appender.join(TimeUnit.SECONDS.toMillis(100));
            for (final Thread reader : readers) {
                reader.join(TimeUnit.SECONDS.toMillis(100));
            }
            assertEquals(List.of(), failures);
            final long length = store.info("c").length();
            assertEquals(length, copiedBy[0], "reader 0 copied every byte");
            assertEquals(length, copiedBy[1], "reader 1 copied every byte");
            assertTrue(store.info("c").sealed());
        } finally {
            store.close();
            cache.close();
        }
    }

    private interface Body {
        void run() throws Exception;
    }

    private static Thread start(final String name, final List<Throwable> failures, final Body body) {
        final Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (final Throwable t) {
                failures.add(new AssertionError(name + " failed", t));
            }
        }, name);
        thread.start();
        return thread;
    }

    private static byte payload(final int producer, final int sequence, final int index) {
        return TestSegments.at(producer * 1_000_003L + sequence, index);
    }

    /** Appends the producer's records in order, retrying while the cache is full of unread bytes. */
    private static void produce(final SegmentStore store, final int segment, final int producer, final long[] offsets)
        throws InterruptedException {
        final Random random = new Random(segment * 100L + producer);
        final String name = "s" + segment;
        for (int sequence = 0; sequence < offsets.length; sequence++) {
            final int length = HEADER + random.nextInt(MAX_RECORD - HEADER);
            final ByteBuf record = Unpooled.buffer(length);
            record.writeInt(length).writeInt(producer).writeInt(sequence);
            for (int i = HEADER; i < length; i++) {
                record.writeByte(payload(producer, sequence, i));
            }
            while (true) {
                try {
                    offsets[sequence] = store.append(name, record);
                    break;
                } catch (final CacheFullException e) {
                    Thread.sleep(1);
                }
            }
        }
    }

    /**
     * Reads the segment from 0 to its sealed end, waiting on futures at the tail; after each read
     * marks durable what every reader of the segment has read.
     *
     * @return the bytes read.
     */
    private static byte[] tail(final SegmentStore store, final int segment, final int reader, final AtomicLongArray positions)
        throws Exception {
        final String name = "s" + segment;
        final Random random = new Random(segment * 10L + reader);
        ByteBuffer stream = ByteBuffer.allocate(1 << 20);
        long offset = 0;
        while (true) {
            final int maxLength = 1 + random.nextInt(64 * 1024);
            try (ReadResult result = store.readOrWait(name, offset, maxLength, Duration.ofSeconds(30)).get(60, TimeUnit.SECONDS)) {
                assertTrue(result.status() != ReadStatus.NOT_CACHED && result.status() != ReadStatus.TIMED_OUT,
                    () -> "reader " + reader + " of " + name + " at offset=" + result.offset() + ": " + result.status());
                if (stream.remaining() < result.length()) {
                    final ByteBuffer larger = ByteBuffer.allocate(Math.max(stream.capacity() * 2, stream.position() + result.length()));
                    stream.flip();
                    stream = larger.put(stream);
                }
                result.data().getBytes(0, stream.array(), stream.position(), result.length());
                stream.position(stream.position() + result.length());
                offset = result.nextOffset();
                if (result.status() == ReadStatus.SEALED_END) {
                    break;
                }
            }
            positions.set(segment * READERS_PER_SEGMENT + reader, offset);
            long durable = Long.MAX_VALUE;
            for (int r = 0; r < READERS_PER_SEGMENT; r++) {
                durable = Math.min(durable, positions.get(segment * READERS_PER_SEGMENT + r));
            }
            store.markDurable(name, durable);
        }
        final byte[] bytes = new byte[stream.position()];
        stream.flip().get(bytes);
        return bytes;
    }

    /** Parses the records: each producer's in order, none lost or repeated, at the offsets its appends returned. */
    private static void verify(final byte[] stream, final long[][] offsets) {
        final ByteBuffer buffer = ByteBuffer.wrap(stream);
        final int[] next = new int[offsets.length];
        while (buffer.hasRemaining()) {
            final int position = buffer.position();
            final int length = buffer.getInt();
            final int producer = buffer.getInt();
            final int sequence = buffer.getInt();
            assertTrue(producer >= 0 && producer < offsets.length, "producer=" + producer + " at position=" + position);
            assertEquals(next[producer], sequence, "producer=" + producer + " record order at position=" + position);
            assertEquals(offsets[producer][sequence], position, "the append's returned offset");
            for (int i = HEADER; i < length; i++) {
                if (buffer.get() != payload(producer, sequence, i)) {
                    throw new AssertionError("payload byte " + i + " of producer=" + producer + " sequence=" + sequence
                        + " at position=" + position);
                }
            }
            next[producer]++;
        }
        for (int producer = 0; producer < offsets.length; producer++) {
            assertEquals(RECORDS_PER_PRODUCER, next[producer], "records of producer=" + producer);
        }
    }
}
