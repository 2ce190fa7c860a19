package io.streamcache.segmentstore.queue;

import io.streamcache.segmentstore.StoreParts;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The message-queue facade: 40 threads appending messages of 100 B to 17 KB to shared queues
 * while readers check what they can see, every message verified by getRange, then again after a
 * restart; bad input.
 */
@Timeout(180)
class MessageQueueStoreTest {
    private static final int THREADS = 40;
    private static final int MESSAGES_PER_THREAD = 100;
    private static final String[] TOPICS = {"orders", "clicks", "t/with/slashes"};
    private static final int QUEUES = 4;
    private static final int MIN_LENGTH = 100;
    private static final int MAX_LENGTH = 17 * 1024;

    @TempDir
    Path directory;

    @TempDir
    Path crashCopy;

    private LogConfig config() {
        return config(directory);
    }

    private static LogConfig config(final Path directory) {
        return LogConfig.builder(directory).fileLength(16L << 20).preWrite(false).spareFiles(0).build();
    }

    /** A message that says what it should be: its seed, then bytes drawn from it. */
    static byte[] message(final long seed) {
        final Random random = new Random(seed);
        final byte[] bytes = new byte[MIN_LENGTH + random.nextInt(MAX_LENGTH - MIN_LENGTH + 1)];
        random.nextBytes(bytes);
        ByteBuffer.wrap(bytes).putLong(0, seed);
        return bytes;
    }

    static boolean isValid(final ByteBuffer message) {
        final byte[] bytes = new byte[message.remaining()];
        message.duplicate().get(bytes);
        return bytes.length >= 8 && java.util.Arrays.equals(bytes, message(ByteBuffer.wrap(bytes).getLong(0)));
    }

    private record Key(String topic, int queueId) {
    }

    @Test
    void shouldOpenItsOwnCacheWithThePagesCommittedInTheBackground() {
        // The facade's own cache: no page fault on the completion thread while it first fills.
        try (MessageQueueStore queues = MessageQueueStore.open(config(), 8L << 20)) {
            final String region = queues.store().cache().regionDescription();
            assertTrue(region.contains("background commit"), region);
        }
    }

    @Test
    void shouldKeepEveryMessageOfFortyWritersInOrderAcrossARestart() throws Exception {
        final Map<Key, Map<Long, Long>> seeds = new ConcurrentHashMap<>();
        final AtomicLong messages = new AtomicLong();
        final AtomicBoolean writing = new AtomicBoolean(true);
        final AtomicLong readerChecks = new AtomicLong();
        try (MessageQueueStore queues = MessageQueueStore.open(config(), 16L << 20)) {
            final ExecutorService threads = Executors.newFixedThreadPool(THREADS + 4);
            try {
                final CountDownLatch start = new CountDownLatch(1);
                final List<Future<?>> writers = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    final int thread = t;
                    writers.add(threads.submit(() -> {
                        start.await();
                        final Random random = new Random(thread);
                        for (int i = 0; i < MESSAGES_PER_THREAD; i++) {
                            final Key key = new Key(TOPICS[random.nextInt(TOPICS.length)], random.nextInt(QUEUES));
                            final long seed = (long) thread << 32 | i;
                            final ByteBuffer data = ByteBuffer.wrap(message(seed));
                            final long index = queues.append(key.topic(), key.queueId(), data);
                            assertEquals(0, data.position(), "the data's position is not moved");
                            assertNull(seeds.computeIfAbsent(key, k -> new ConcurrentHashMap<>()).put(index, seed),
                                "index " + index + " given twice in " + key);
                            messages.incrementAndGet();
                        }
                        return null;
                    }));
                }
                final List<Future<?>> readers = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    final int reader = r;
                    readers.add(threads.submit(() -> {
                        final Random random = new Random(100 + reader);
                        while (writing.get()) {
                            final Key key = new Key(TOPICS[random.nextInt(TOPICS.length)], random.nextInt(QUEUES));
                            final long count = queues.messageCount(key.topic(), key.queueId());
                            final long from = count == 0 ? 0 : random.nextInt((int) count);
                            final Map<Integer, ByteBuffer> got = queues.getRange(key.topic(), key.queueId(), from, 5);
                            for (final ByteBuffer message : got.values()) {
                                assertTrue(isValid(message), "a published message is whole");
                                readerChecks.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (final Future<?> writer : writers) {
                    writer.get(120, TimeUnit.SECONDS);
                }
                writing.set(false);
                for (final Future<?> reader : readers) {
                    reader.get(30, TimeUnit.SECONDS);
                }
            } finally {
                threads.shutdownNow();
            }
            assertEquals((long) THREADS * MESSAGES_PER_THREAD, messages.get());
            assertTrue(readerChecks.get() > 0, "readers saw messages while writers wrote");
            verify(queues, seeds);
            // A crash that keeps the page cache: the files as they are, the store never closed.
            Thread.sleep(50);
            Files.createDirectories(crashCopy);
            try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
                for (final Path file : files) {
                    Files.copy(file, crashCopy.resolve(file.getFileName()));
                }
            }
        }
        try (MessageQueueStore crashed = MessageQueueStore.open(config(crashCopy), 8L << 20)) {
            verify(crashed, seeds);
        }

        // Restart through the constructor over a store built by hand.
        final BlockCache cache = BlockCache.builder().capacity(8L << 20).registerMBean(false).build();
        try (cache; SegmentStore store = SegmentStore.builder(cache).log(config()).build()) {
            final MessageQueueStore queues = new MessageQueueStore(store);
            assertEquals(seeds.size(), queues.queueCount());
            verify(queues, seeds);
            final Key key = seeds.keySet().iterator().next();
            final long next = seeds.get(key).size();
            assertEquals(next, queues.append(key.topic(), key.queueId(), ByteBuffer.wrap(message(-1))), "appends continue");
            seeds.get(key).put(next, -1L);
            queues.close();
        }

        // And through open().
        try (MessageQueueStore queues = MessageQueueStore.open(config(), 8L << 20)) {
            verify(queues, seeds);
        }
    }

    private static void verify(final MessageQueueStore queues, final Map<Key, Map<Long, Long>> seeds) {
        for (final Map.Entry<Key, Map<Long, Long>> queue : seeds.entrySet()) {
            final Key key = queue.getKey();
            final int count = queue.getValue().size();
            assertEquals(count, queues.messageCount(key.topic(), key.queueId()), key.toString());
            for (long from = 0; from < count; from += 7) {
                final Map<Integer, ByteBuffer> got = queues.getRange(key.topic(), key.queueId(), from, 7);
                assertEquals(Math.min(7, count - from), got.size(), key + " from=" + from);
                for (int i = 0; i < got.size(); i++) {
                    final ByteBuffer message = got.get(i);
                    final byte[] bytes = new byte[message.remaining()];
                    message.get(bytes);
                    assertArrayEquals(message(queue.getValue().get(from + i)), bytes, key + " message " + (from + i));
                }
            }
            assertTrue(queues.getRange(key.topic(), key.queueId(), count, 10).isEmpty(), "empty past the end");
        }
    }

    @Test
    void shouldRejectBadInputWithASpecificException() {
        final MessageQueueStore queues = MessageQueueStore.open(config(), 8L << 20);
        try {
            final ByteBuffer data = ByteBuffer.wrap(new byte[] {1, 2, 3});
            assertThrows(NullPointerException.class, () -> queues.append(null, 0, data));
            assertThrows(NullPointerException.class, () -> queues.append("t", 0, null));
            assertThrows(IllegalArgumentException.class, () -> queues.append("t", -1, data));
            assertThrows(IllegalArgumentException.class, () -> queues.append("t", 0, ByteBuffer.allocate(0)));
            assertThrows(NullPointerException.class, () -> queues.getRange(null, 0, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> queues.getRange("t", -1, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> queues.getRange("t", 0, -1, 1));
            assertThrows(IllegalArgumentException.class, () -> queues.getRange("t", 0, 0, -1));
            assertTrue(queues.getRange("never", 0, 0, 10).isEmpty(), "a queue never appended to is empty");
            assertEquals(0, queues.append("t", 0, data));
            assertEquals(1, queues.append("t", 0, data));
            assertEquals(0, queues.append("t", 1, data), "queues count separately");
            assertTrue(queues.getRange("t", 0, 0, 0).isEmpty());
            assertEquals(2, queues.getRange("t", 0, 0, 100).size());
            assertEquals(1, queues.getRange("t", 0, 1, 100).size());
            assertTrue(queues.getRange("t", 0, 2, 100).isEmpty());
            final ByteBuffer got = queues.getRange("t", 0, 1, 1).get(0);
            assertTrue(got.isReadOnly());
            assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3}), got);
            queues.close();
            assertThrows(io.streamcache.core.CacheClosedException.class, () -> queues.append("t", 0, data));
        } finally {
            queues.close();
        }
    }

    @Test
    void shouldLeaveNoTraceOfAFailedAppend() {
        try (MessageQueueStore queues = MessageQueueStore.open(config(), 8L << 20)) {
            final int maxAppendLength = StoreParts.logWriter(queues.segmentStore()).maxAppendLength();
            final ByteBuffer tooLong = ByteBuffer.allocate(maxAppendLength + 1);
            assertThrows(io.streamcache.segmentstore.SegmentAppendTooLongException.class, () -> queues.append("big", 0, tooLong));
            final String longTopic = "t".repeat(io.streamcache.segmentstore.SegmentNames.MAX_NAME_LENGTH);
            assertThrows(io.streamcache.segmentstore.SegmentNameException.class,
                () -> queues.append(longTopic, 0, ByteBuffer.wrap(new byte[] {1})));
            assertEquals(0, queues.queueCount(), "no phantom queue");
            assertEquals(0, queues.segmentStore().segmentCount(), "no segment");
            assertEquals(0, queues.messageCount("big", 0));
            queues.segmentStore().create(MessageQueueStore.segmentName("taken", 0));
            queues.segmentStore().close();
            assertThrows(io.streamcache.core.CacheClosedException.class, () -> queues.append("fresh", 0, ByteBuffer.wrap(new byte[] {1})));
            assertEquals(0, queues.queueCount(), "a create that failed leaves no queue");
        }
    }

    /**
     * A producer reuses one buffer (the thread keeps one wrapper of it) at any position and
     * limit, and switches between buffers of every kind: every message reads back as appended.
     */
    @Test
    void shouldAppendFromAReusedBufferAtAnyPositionAndFromBuffersOfEveryKind() {
        try (MessageQueueStore queues = MessageQueueStore.open(config(), 8L << 20)) {
            final ByteBuffer direct = ByteBuffer.allocateDirect(4096);
            final ByteBuffer heap = ByteBuffer.allocate(4096);
            final Random random = new Random(3);
            final List<byte[]> appended = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                final byte[] bytes = new byte[1 + random.nextInt(1000)];
                random.nextBytes(bytes);
                final int position = random.nextInt(4096 - bytes.length);
                final ByteBuffer source = switch (i % 5) {
                    case 0, 1 -> direct;
                    case 2 -> heap;
                    case 3 -> direct.asReadOnlyBuffer();
                    default -> ByteBuffer.wrap(new byte[4096]);
                };
                final ByteBuffer writable = source.isReadOnly() ? direct : source;
                writable.clear();
                writable.put(position, bytes);
                source.limit(position + bytes.length).position(position);
                assertEquals(i, queues.append("reuse", 1, source));
                assertEquals(position, source.position(), "the position is not moved");
                assertEquals(position + bytes.length, source.limit());
                appended.add(bytes);
                source.clear();
            }
            for (int i = 0; i < appended.size(); i++) {
                final ByteBuffer got = queues.getRange("reuse", 1, i, 1).get(0);
                final byte[] bytes = new byte[got.remaining()];
                got.get(bytes);
                assertArrayEquals(appended.get(i), bytes, "message " + i);
            }
        }
    }

    @Test
    void shouldTakeOnlyCanonicalQueueNamesAsQueuesWhenOpening() {
        assertEquals(7, MessageQueueStore.queueIdOf("mq/7/t", 4));
        assertEquals(0, MessageQueueStore.queueIdOf("mq/0/t", 4));
        assertEquals(Integer.MAX_VALUE, MessageQueueStore.queueIdOf("mq/2147483647/t", 13));
        assertEquals(-1, MessageQueueStore.queueIdOf("mq/2147483648/t", 13));
        assertEquals(-1, MessageQueueStore.queueIdOf("mq/07/t", 5));
        assertEquals(-1, MessageQueueStore.queueIdOf("mq//t", 3));
        assertEquals(-1, MessageQueueStore.queueIdOf("mq/-1/t", 5));
        assertEquals(-1, MessageQueueStore.queueIdOf("mq/x/t", 4));
        final BlockCache cache = BlockCache.builder().capacity(8L << 20).registerMBean(false).build();
        try (SegmentStore store = SegmentStore.builder(cache).log(config()).build()) {
            final MessageQueueStore first = new MessageQueueStore(store);
            assertEquals(0, first.append("t/x", 12, ByteBuffer.wrap(new byte[] {1, 2})));
            assertEquals(1, first.append("t/x", 12, ByteBuffer.wrap(new byte[] {3})));
            for (final String other : List.of("mq/012/t", "mq/x/t", "mq/5", "other/1/t")) {
                store.create(other);
                store.append(other, ByteBuffer.wrap(new byte[] {9}));
            }
            final MessageQueueStore second = new MessageQueueStore(store);
            assertEquals(1, second.queueCount(), "only mq/12/t/x is a queue");
            assertEquals(2, second.messageCount("t/x", 12));
            assertEquals(0, second.messageCount("t", 12));
            assertEquals(ByteBuffer.wrap(new byte[] {3}), second.getRange("t/x", 12, 1, 5).get(0));
        } finally {
            cache.close();
        }
    }

    /** Forces fail while it is set: the log fails, as on a disk error. */
    private static final class FailingForces implements io.streamcache.log.LogFileFactory {
        private final io.streamcache.log.LogFileFactory files =
            io.streamcache.log.internal.FileChannelLogFile.factory(io.streamcache.log.DirectIoMode.OFF);
        volatile boolean fail;

        @Override
        public io.streamcache.log.LogFile open(final Path path) throws java.io.IOException {
            final io.streamcache.log.LogFile file = files.open(path);
            return new io.streamcache.log.LogFile() {
                @Override
                public void write(final ByteBuffer source, final long position) throws java.io.IOException {
                    file.write(source, position);
                }

                @Override
                public int read(final ByteBuffer destination, final long position) throws java.io.IOException {
                    return file.read(destination, position);
                }

                @Override
                public void force() throws java.io.IOException {
                    if (fail) {
                        throw new java.io.IOException("Input/output error");
                    }
                    file.force();
                }

                @Override
                public long length() throws java.io.IOException {
                    return file.length();
                }

                @Override
                public void setLength(final long length) throws java.io.IOException {
                    file.setLength(length);
                }

                @Override
                public Path path() {
                    return file.path();
                }

                @Override
                public void close() throws java.io.IOException {
                    file.close();
                }
            };
        }
    }

    /**
     * Eight threads append to two queues while the disk fails for a while: the appends that fail
     * throw, the others get indexes 0, 1, 2, ... with no hole and no repeat per queue, and after
     * a restart every counted message reads back as the one its thread appended.
     */
    @Test
    void shouldNumberWithoutHolesAcrossADiskError() throws Exception {
        final FailingForces files = new FailingForces();
        final LogConfig config = LogConfig.builder(directory).fileLength(16L << 20).preWrite(false).spareFiles(0).fileFactory(files)
            .retryInterval(java.time.Duration.ofMillis(20)).build();
        final int threads = 8;
        final ConcurrentHashMap<Long, Long> bySeed = new ConcurrentHashMap<>();
        final AtomicLong failed = new AtomicLong();
        final AtomicLong succeeded = new AtomicLong();
        try (MessageQueueStore queues = MessageQueueStore.open(config, 8L << 20)) {
            final AtomicBoolean stop = new AtomicBoolean();
            final ExecutorService pool = Executors.newFixedThreadPool(threads);
            final List<Future<?>> done = new ArrayList<>();
            final ConcurrentHashMap<String, Boolean> indexes = new ConcurrentHashMap<>();
            for (int t = 0; t < threads; t++) {
                final int thread = t;
                done.add(pool.submit(() -> {
                    final ByteBuffer buffer = ByteBuffer.allocateDirect(MAX_LENGTH);
                    for (long i = 0; !stop.get() || i < 20; i++) {
                        final long seed = thread * 1_000_000L + i;
                        final int queue = (int) (seed % 2);
                        final byte[] bytes = message(seed);
                        buffer.clear();
                        buffer.put(bytes).flip();
                        try {
                            final long index = queues.append("disk", queue, buffer);
                            if (indexes.putIfAbsent(queue + "/" + index, Boolean.TRUE) != null) {
                                throw new AssertionError("index " + index + " of queue " + queue + " given twice");
                            }
                            bySeed.put(seed, queue * (1L << 40) + index);
                            succeeded.incrementAndGet();
                        } catch (final io.streamcache.log.LogFailedException e) {
                            failed.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            while (succeeded.get() < 100) {
                Thread.sleep(1);
            }
            files.fail = true;
            while (failed.get() == 0) {
                Thread.sleep(1);
            }
            Thread.sleep(30);
            files.fail = false;
            final long before = succeeded.get();
            while (succeeded.get() < before + 100) {
                Thread.sleep(1);
            }
            stop.set(true);
            for (final Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertTrue(failed.get() > 0);
            assertEquals(succeeded.get(), queues.messageCount("disk", 0) + queues.messageCount("disk", 1), "no hole");
        }
        try (MessageQueueStore reopened = MessageQueueStore.open(config(), 8L << 20)) {
            assertEquals(succeeded.get(), reopened.messageCount("disk", 0) + reopened.messageCount("disk", 1));
            for (final Map.Entry<Long, Long> e : bySeed.entrySet()) {
                final int queue = (int) (e.getValue() >>> 40);
                final long index = e.getValue() & ((1L << 40) - 1);
                final ByteBuffer got = reopened.getRange("disk", queue, index, 1).get(0);
                assertEquals(ByteBuffer.wrap(message(e.getKey())), got, "queue " + queue + " index " + index);
            }
        }
    }
}
