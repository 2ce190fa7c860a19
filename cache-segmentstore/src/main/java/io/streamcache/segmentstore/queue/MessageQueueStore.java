package io.streamcache.segmentstore.queue;

import io.streamcache.segmentstore.internal.StoreInternals;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentAppendTooLongException;
import io.streamcache.segmentstore.SegmentExistsException;
import io.streamcache.segmentstore.SegmentNameException;
import io.streamcache.segmentstore.SegmentNames;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.log.LogConfig;
import io.streamcache.segmentstore.internal.log.recovery.LocationIndex;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The message-queue interface of the contest (topics of numbered queues of messages) over a
 * durable {@link SegmentStore}: thread-safe; any number of threads may append to and read from
 * any queue.
 *
 * <h2>Design</h2>
 * <pre>
 *  append(topic, queueId, data)                       getRange(topic, queueId, offset, fetchNum)
 *    | queue = queues[(topic, queueId)]                 | queue = queues[(topic, queueId)] (none: empty map)
 *    |   (first append: create segment "mq/queueId/topic") | n = queue.count        volatile read, pairs with
 *    | store.appendAsync(segment, data)  ---- log ----   |                          the publisher's write
 *    |   one append = one DATA record      group commit  | ends = queue.ends      volatile read
 *    | completion (in byte order): queue.publish(offset, length)
 *    |   ends[count] = offset + length; count++          | bytes [ends[offset-1], ends[offset+k-1])
 *    |   (an out-of-order completion waits in pending)   |   via store.readThrough: cache, else the log
 *    v return the message's index once published         v up to fetchNum messages, keyed 0..k-1
 *
 *  one queue = one segment                 message index (per queue, on the heap)
 *  +----------+---------+---------------+  ends: long[]  | 812 | 1 930 | 19 311 | 19 411 | -1 ...
 *  | msg 0    | msg 1   | msg 2         |                   msg 0 is [0, 812), msg i is [ends[i-1], ends[i])
 *  +----------+---------+---------------+  count: 4 (published), grows by doubling, 8 bytes a message
 *  0         812      1 930          19 311
 * </pre>
 *
 * <p>Each (topic, queueId) is one segment of the store; a message is one append, so its bytes are
 * contiguous, and its index in the queue is its rank in byte order. The per-queue message index is
 * a growable {@code long[]} of message end offsets (8 bytes a message). A message is published
 * (counted) only after its append completed, that is after its bytes are durable and in the
 * segment (the cache, or a NOT_CACHED gap the log can fill), and only after every message before
 * it: an append whose completion is seen before an earlier one's (its caller registered the
 * callback late) waits in a small pending map. The publisher writes {@code ends[i]} and then the
 * volatile {@code count} (a release); {@code getRange} reads {@code count} and then
 * {@code ends} (acquires), so it never sees a message before its bytes are in place. An
 * {@code append} returns once its message is published: its index is then final.
 *
 * <p><b>Surviving a restart.</b> The index is rebuilt, not stored: the log holds one DATA
 * record per append, so the segment's location index
 * ({@link SegmentStore#locations(String)}, rebuilt by recovery from the record headers without
 * reading any payload) lists exactly the message boundaries. A message therefore must hold at
 * least one byte (an empty append writes no record) and at most the log's
 * {@code maxAppendLength} (16 MiB by default). A failed append (a disk error) gives
 * its offset back and is never published, so the numbering has no holes.
 *
 * <p><b>Design note:</b> messages are read as one contiguous byte range per call and handed out
 * as slices of one heap buffer: one copy out of the cache, one allocation, whatever fetchNum is.
 */
public final class MessageQueueStore implements AutoCloseable {
    /** Prefix of the segment names of the queues. */
    public static final String SEGMENT_PREFIX = "mq/";

    private static final int INITIAL_CAPACITY = 16;

    private final SegmentStore store;
    private final BlockCache ownedCache;
    private final ConcurrentHashMap<String, MessageQueue> queues = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * A facade over {@code store} (it must have a log, to be durable and to rebuild the message
     * indexes): rebuilds the queues of its existing {@code mq/...} segments. The store stays the
     * caller's; {@link #close()} does not close it. Nothing else may append to the queues'
     * segments.
     *
     * @throws IllegalStateException if a queue's segment has no location index (the store was
     *                               recovered by a custom hook) or was truncated.
     */
    public MessageQueueStore(final SegmentStore store) {
        this(store, null);
    }

    private MessageQueueStore(final SegmentStore store, final BlockCache ownedCache) {
        this.store = Objects.requireNonNull(store, "store");
        this.ownedCache = ownedCache;
        for (final String name : store.segmentNames()) {
            if (name.startsWith(SEGMENT_PREFIX)) {
                queues.put(name, MessageQueue.rebuild(store, name));
            }
        }
    }

    /**
     * Opens (or recovers) a store in {@code directory} with the default log settings and a cache
     * of {@code cacheCapacity} bytes, both owned by the facade.
     */
    public static MessageQueueStore open(final Path directory, final long cacheCapacity) {
        return open(LogConfig.builder(directory).build(), cacheCapacity);
    }

    /**
     * Opens (or recovers) a store with the given log settings and a cache of {@code cacheCapacity}
     * bytes, both owned by the facade.
     */
    public static MessageQueueStore open(final LogConfig log, final long cacheCapacity) {
        Objects.requireNonNull(log, "log");
        final BlockCache cache = BlockCache.builder().capacity(cacheCapacity).registerMBean(false).build();
        SegmentStore store = null;
        try {
            store = SegmentStore.builder(cache).log(log).build();
            return new MessageQueueStore(store, cache);
        } catch (final RuntimeException | Error e) {
            if (store != null) {
                store.close();
            }
            cache.close();
            throw e;
        }
    }

    /**
     * Appends a message (the remaining bytes of {@code data}; its position is not moved, and it
     * must not change until this returns) and waits until it is durable.
     *
     * @return the message's offset in its queue: 0, 1, 2, ...
     * @throws NullPointerException     if {@code topic} or {@code data} is null.
     * @throws IllegalArgumentException if {@code queueId} is negative, or {@code data} is empty.
     * @throws SegmentAppendTooLongException if {@code data} is longer than the log's maxAppendLength
     *                                  (16 MiB by default).
     * @throws SegmentNameException     if the queue's segment name ({@link #segmentName}) is not a
     *                                  valid segment name (an unpaired surrogate in the topic, too long).
     *                                  A failed append leaves no queue behind.
     * @throws io.streamcache.segmentstore.log.LogFailedException if the log failed (the message
     *                                  was not appended).
     * @throws CacheClosedException     if the facade is closed.
     */
    public long append(final String topic, final int queueId, final ByteBuffer data) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(data, "data");
        checkQueueId(queueId);
        final int length = data.remaining();
        if (length == 0) {
            throw new IllegalArgumentException("data.remaining()=0: a message holds at least one byte (topic=" + topic
                + " queueId=" + queueId + ")");
        }
        ensureOpen();
        final String segment = segmentName(topic, queueId);
        // Everything that can be checked is checked before the queue exists: a failed append leaves no trace.
        SegmentNames.check(segment);
        checkLength(segment, length);
        final MessageQueue queue = createdQueue(segment);
        final ByteBuf wrapped = Unpooled.wrappedBuffer(data);
        final CompletableFuture<Long> index = new CompletableFuture<>();
        final CompletableFuture<Long> appended = store.appendAsync(queue.segment, wrapped);
        appended.whenComplete((offset, failure) -> {
            if (failure != null) {
                index.completeExceptionally(failure);
            } else {
                try {
                    queue.publish(offset, length, index);
                } catch (final RuntimeException | Error e) {
                    index.completeExceptionally(e);
                }
            }
        });
        return join(index);
    }

    /**
     * Reads up to {@code fetchNum} messages of a queue from message {@code offset}: each a
     * read-only heap buffer of its own (position 0, limit its length), keyed 0, 1, ... in order.
     * Only published messages are returned (see the class comment).
     *
     * @return the messages; an empty map at or past the end of the queue, or for a queue never appended to.
     * @throws NullPointerException     if {@code topic} is null.
     * @throws IllegalArgumentException if {@code queueId}, {@code offset} or {@code fetchNum} is negative.
     * @throws CacheClosedException     if the facade is closed.
     */
    public Map<Integer, ByteBuffer> getRange(final String topic, final int queueId, final long offset, final int fetchNum) {
        Objects.requireNonNull(topic, "topic");
        checkQueueId(queueId);
        if (offset < 0) {
            throw new IllegalArgumentException("offset=" + offset + " must be >= 0 (topic=" + topic + " queueId=" + queueId + ")");
        }
        if (fetchNum < 0) {
            throw new IllegalArgumentException("fetchNum=" + fetchNum + " must be >= 0 (topic=" + topic + " queueId=" + queueId + ")");
        }
        ensureOpen();
        final MessageQueue queue = queues.get(segmentName(topic, queueId));
        if (queue == null || fetchNum == 0) {
            return Collections.emptyMap();
        }
        // Acquire: count first, then the array it was published with (or a newer one).
        final long count = queue.count;
        final long[] ends = queue.ends;
        if (offset >= count) {
            return Collections.emptyMap();
        }
        final int n = (int) Math.min(fetchNum, count - offset);
        final int first = (int) offset;
        final long start = first == 0 ? 0 : ends[first - 1];
        final long stop = ends[first + n - 1];
        final ByteBuffer bytes = read(queue.segment, start, stop);
        final Map<Integer, ByteBuffer> messages = new HashMap<>(n * 2);
        long from = start;
        for (int i = 0; i < n; i++) {
            final long end = ends[first + i];
            messages.put(i, bytes.slice((int) (from - start), (int) (end - from)).asReadOnlyBuffer());
            from = end;
        }
        return messages;
    }

    /**
     * @return the messages published in a queue (0 for a queue never appended to).
     * @throws NullPointerException     if {@code topic} is null.
     * @throws IllegalArgumentException if {@code queueId} is negative.
     */
    public long messageCount(final String topic, final int queueId) {
        Objects.requireNonNull(topic, "topic");
        checkQueueId(queueId);
        final MessageQueue queue = queues.get(segmentName(topic, queueId));
        return queue == null ? 0 : queue.count;
    }

    /**
     * @return the number of queues (segments) known.
     */
    public int queueCount() {
        return queues.size();
    }

    /**
     * @return the store the queues live in.
     */
    public SegmentStore segmentStore() {
        return store;
    }

    /**
     * Closes the store and the cache if {@link #open} built them; otherwise only refuses further
     * calls. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (ownedCache != null) {
            store.close();
            ownedCache.close();
        }
    }

    /**
     * @return the segment holding a queue: {@code mq/<queueId>/<topic>} (the id first, so any topic
     *         string maps to one name).
     */
    public static String segmentName(final String topic, final int queueId) {
        return SEGMENT_PREFIX + queueId + '/' + topic;
    }

    @Override
    public String toString() {
        return "MessageQueueStore{queues=" + queues.size() + ", store=" + store + '}';
    }

    private ByteBuffer read(final String segment, final long start, final long stop) {
        final ByteBuffer bytes = ByteBuffer.allocate((int) (stop - start));
        long at = start;
        while (at < stop) {
            final ReadResult result = join(store.readThrough(segment, at, (int) Math.min(Integer.MAX_VALUE, stop - at)));
            try {
                if (result.length() == 0) {
                    throw new IllegalStateException("segment=" + segment + " offset=" + at + " status=" + result.status()
                        + ": a published message is not readable");
                }
                final ByteBuf data = result.data();
                data.getBytes(data.readerIndex(), bytes.array(), (int) (at - start), result.length());
                at += result.length();
            } finally {
                result.close();
            }
        }
        return bytes;
    }

    /** The queue's segment created (or found); a queue whose creation failed on another thread is replaced. */
    private MessageQueue createdQueue(final String segment) {
        while (true) {
            final MessageQueue queue = queues.computeIfAbsent(segment, MessageQueue::new);
            if (queue.ensureCreated(store, queues)) {
                return queue;
            }
        }
    }

    /** An append the log cannot take fails before its queue exists. */
    private void checkLength(final String segment, final int length) {
        if (length > store.maxAppendLength()) {
            throw new SegmentAppendTooLongException(segment, length, store.maxAppendLength());
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new CacheClosedException("message queue store is closed");
        }
    }

    private static void checkQueueId(final int queueId) {
        if (queueId < 0) {
            throw new IllegalArgumentException("queueId=" + queueId + " must be >= 0");
        }
    }

    private static <T> T join(final CompletableFuture<T> future) {
        try {
            return future.join();
        } catch (final CompletionException e) {
            final Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }

    /**
     * One queue's message index: the end offset of every published message. Publication is
     * serialized by the instance's monitor; readers use the volatile {@link #count} and
     * {@link #ends} without it.
     */
    private static final class MessageQueue {
        final String segment;
        /** Published messages; written under the monitor after their ends (release). */
        volatile long count;
        /** End offsets; replaced (grown) under the monitor before a count that needs it is published. */
        volatile long[] ends;
        /** Byte end of the published messages; under the monitor. */
        private long end;
        /** Completions seen before an earlier one's, by byte offset; under the monitor. */
        private final TreeMap<Long, Pending> pending = new TreeMap<>();
        private volatile boolean created;
        /** Its creation failed and it left the map; under the monitor. */
        private boolean discarded;

        MessageQueue(final String segment) {
            this.segment = segment;
            this.ends = new long[INITIAL_CAPACITY];
        }

        static MessageQueue rebuild(final SegmentStore store, final String segment) {
            final LocationIndex locations = StoreInternals.locations(store, segment);
            final long length = store.info(segment).length();
            if (locations == null) {
                throw new IllegalStateException("segment=" + segment + " has no location index: the message boundaries cannot be "
                    + "rebuilt (recover the store with the default ScanningRecoveryHook)");
            }
            final MessageQueue queue = new MessageQueue(segment);
            synchronized (queue) {
                if (locations.startOffset() != 0 || locations.endOffset() != length) {
                    throw new IllegalStateException("segment=" + segment + " locations [" + locations.startOffset() + ", "
                        + locations.endOffset() + ") do not cover its length=" + length + " from 0");
                }
                final long[] count = new long[1];
                locations.forEach((offset, recordLength, fileNumber, position) -> {
                    queue.grow(count[0] + 1);
                    queue.ends[(int) count[0]] = offset + recordLength;
                    count[0]++;
                });
                queue.end = length;
                queue.count = count[0];
                queue.created = true;
            }
            return queue;
        }

        /**
         * Creates the queue's segment once.
         *
         * @return false if this queue was discarded (its creation failed on another thread):
         *         the caller takes the queue now in the map instead.
         * @throws RuntimeException what the creation threw; the queue is then out of the map.
         */
        boolean ensureCreated(final SegmentStore store, final ConcurrentHashMap<String, MessageQueue> queues) {
            if (created) {
                return true;
            }
            synchronized (this) {
                if (discarded) {
                    return false;
                }
                if (!created) {
                    // The CREATE is not waited for: the first append, queued after it, is
                    // acknowledged only once both are durable (one force, not two). A creation
                    // that fails (the log failed) fails that append too and discards the queue.
                    final CompletableFuture<Void> creation;
                    try {
                        creation = store.createAsync(segment);
                    } catch (final RuntimeException | Error e) {
                        discard(queues);
                        throw e;
                    }
                    final Throwable failedAtOnce = creation.isCompletedExceptionally() ? cause(creation) : null;
                    if (failedAtOnce != null && !(failedAtOnce instanceof SegmentExistsException)) {
                        discard(queues);
                        throw failedAtOnce instanceof RuntimeException r ? r : new CompletionException(failedAtOnce);
                    }
                    // SegmentExistsException: created by another facade over the same store; take it as it is.
                    if (failedAtOnce == null) {
                        creation.whenComplete((ignored, failure) -> {
                            if (failure != null) {
                                synchronized (this) {
                                    discard(queues);
                                }
                            }
                        });
                    }
                    created = true;
                }
                return true;
            }
        }

        /** Takes the queue out of the map after its creation failed; under the monitor. */
        private void discard(final ConcurrentHashMap<String, MessageQueue> queues) {
            discarded = true;
            created = false;
            queues.remove(segment, this);
        }

        private static Throwable cause(final CompletableFuture<?> failed) {
            try {
                failed.join();
                return null;
            } catch (final CompletionException e) {
                return e.getCause() != null ? e.getCause() : e;
            } catch (final java.util.concurrent.CancellationException e) {
                return e;
            }
        }

        synchronized void publish(final long offset, final int length, final CompletableFuture<Long> index) {
            if (offset != end) {
                pending.put(offset, new Pending(length, index));
                return;
            }
            long published = count;
            published = publishOne(published, length, index);
            for (Pending next = pending.remove(end); next != null; next = pending.remove(end)) {
                published = publishOne(published, next.length, next.index);
            }
        }

        private long publishOne(final long published, final int length, final CompletableFuture<Long> index) {
            grow(published + 1);
            end += length;
            ends[(int) published] = end;
            count = published + 1;
            index.complete(published);
            return published + 1;
        }

        /** Under the monitor. */
        private void grow(final long capacity) {
            if (capacity > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException("segment=" + segment + " holds the most messages a queue may: " + count);
            }
            final long[] current = ends;
            if (capacity > current.length) {
                ends = Arrays.copyOf(current, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(capacity, 2L * current.length)));
            }
        }
    }

    private record Pending(int length, CompletableFuture<Long> index) {
    }
}
