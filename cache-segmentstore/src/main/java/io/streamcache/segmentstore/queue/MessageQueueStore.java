package io.streamcache.segmentstore.queue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CloseGate;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentAppendTooLongException;
import io.streamcache.segmentstore.SegmentNameException;
import io.streamcache.segmentstore.SegmentNames;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The message-queue interface of the contest (topics of numbered queues of messages) over a
 * durable {@link SegmentStore}: thread-safe; any number of threads may append to and read from
 * any queue.
 *
 * <h2>Design</h2>
 * <pre>
 *  append(topic, queueId, data)                       getRange(topic, queueId, offset, fetchNum)
 *    | queue = queues[topic][queueId]  (QueueTable)     | queue = queues[topic][queueId] (none: empty map)
 *    |   (first append: create segment "mq/queueId/topic") | n = queue.count        volatile read, pairs with
 *    | store.append(segment, data)       ---- log ----   |                          the publisher's write
 *    |   one append = one DATA record      group commit  | ends = first, directory (after count)
 *    |   waits with a pooled log request (no garbage)    |
 *    | queue.publish(offset, length), on this thread:    | bytes [ends[offset-1], ends[offset+k-1])
 *    |   wait for the messages before it, then           |   via store.readThrough: cache, else the log
 *    |   end(count) = offset + length; count++           |
 *    v return the message's index                        v up to fetchNum messages, keyed 0..k-1
 *
 *  one queue = one segment                 message index (per queue, on the heap)
 *  +----------+---------+---------------+  ends: long[]  | 812 | 1 930 | 19 311 | 19 411 | -1 ...
 *  | msg 0    | msg 1   | msg 2         |                   msg 0 is [0, 812), msg i is [ends[i-1], ends[i])
 *  +----------+---------+---------------+  count: 4 (published); doubling to 512, then 4 KB chunks: 8 B a message
 *  0         812      1 930          19 311
 * </pre>
 *
 * <p>Each (topic, queueId) is one segment of the store; a message is one append, so its bytes are
 * contiguous, and its index in the queue is its rank in byte order. The per-queue message index is
 * the message end offsets (8 bytes a message) in chunks of direct memory that are never copied,
 * doubling up to 512 messages, then fixed ({@code MessageQueue}, {@code MessageIndexMemory}). A message is published
 * (counted) only after its append completed, that is after its bytes are durable and in the
 * segment (the cache, or a NOT_CACHED gap the log can fill), and only after every message before
 * it. The appending thread publishes its own message once its append completed: a segment's
 * appends complete in offset order, so the messages before it completed too and their threads
 * are publishing them; if one has not yet, it waits on the queue's monitor for it
 * ({@code MessageQueue#publish}). The publisher writes {@code ends[i]} and then the
 * volatile {@code count} (a release); {@code getRange} reads {@code count} and then
 * {@code ends} (acquires), so it never sees a message before its bytes are in place. An
 * {@code append} returns once its message is published: its index is then final.
 *
 * <p><b>Surviving a restart.</b> The index is rebuilt, not stored: the log holds one DATA
 * record per append, so the segment's location index
 * (the store's per-segment index of log locations, rebuilt by recovery from the record headers without
 * reading any payload) lists exactly the message boundaries. A message therefore must hold at
 * least one byte (an empty append writes no record) and at most the log's
 * {@code maxAppendLength} (16 MiB by default). A failed append (a disk error) gives
 * its offset back and is never published, so the numbering has no holes.
 *
 * <p><b>Heap:</b> the facade adds per queue a {@code MessageQueue} (48 bytes), the
 * 4-byte slot in its topic's
 * {@code QueueTable} page; the segment name is the store's own string. The store's segment costs
 * more (see docs/benchmarks.md, "Message-queue facade": heap per queue).
 *
 * <p><b>Design note:</b> messages are read as one contiguous byte range per call and handed out
 * as slices of one heap buffer: one copy out of the cache, one allocation, whatever fetchNum is.
 */
public final class MessageQueueStore implements AutoCloseable {
    /** Prefix of the segment names of the queues. */
    public static final String SEGMENT_PREFIX = "mq/";

    /** Each thread's wrapper of the last buffer it appended from (see {@link Wrapped}). */
    private static final ThreadLocal<Wrapped> WRAPPED = ThreadLocal.withInitial(Wrapped::new);

    private final SegmentStore store;
    private final BlockCache ownedCache;
    private final QueueTable queues = new QueueTable();
    /** Where the queues' message indexes keep their ends (direct memory; see {@link #messageIndexBytes()}). */
    private final MessageIndexMemory indexMemory = new MessageIndexMemory();
    private volatile boolean closed;
    /** Appends and reads in flight, so that {@link #close()} closes the cache only after they returned. */
    private final CloseGate gate = new CloseGate();
    /** How long {@link #close()} waits for the calls in flight. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final Logger LOG = LoggerFactory.getLogger(MessageQueueStore.class);

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
            final int slash = name.startsWith(SEGMENT_PREFIX) ? name.indexOf('/', SEGMENT_PREFIX.length()) : -1;
            final int queueId = slash < 0 ? -1 : queueIdOf(name, slash);
            if (queueId < 0) {
                continue;
            }
            queues.putRebuilt(name.substring(slash + 1), queueId, MessageQueue.rebuild(store, name, indexMemory));
        }
        Reference.reachabilityFence(indexMemory);
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
     * bytes, both owned by the facade. The cache's memory is direct memory whose pages are
     * committed by a thread of their own once it is built ({@link DirectMemoryRegion.Commit#BACKGROUND}):
     * a message store takes appends as soon as it opens, and with the lazy commit every page's
     * first write would be a page fault on the log's completion thread, which every append waits
     * for. Build the store yourself and pass it to {@link #MessageQueueStore(SegmentStore)} for
     * any other cache.
     */
    public static MessageQueueStore open(final LogConfig log, final long cacheCapacity) {
        Objects.requireNonNull(log, "log");
        final BlockCache cache = BlockCache.builder().capacity(cacheCapacity)
            .region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.BACKGROUND)).registerMBean(false).build();
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
     * <p><b>Allocation:</b> in steady state (the queue exists, and the calling thread appends
     * from the same {@code ByteBuffer} object as on its last call, as a producer reusing its
     * buffer does) this method allocates nothing itself, and the store's synchronous append
     * allocates no request (a pooled one, see docs/api.md); the queue's message index grows by
     * 8 bytes a message off the heap (see {@code MessageQueue}). A thread keeps a wrapper of the last
     * buffer it appended from (so that buffer stays reachable from the thread); a new buffer
     * object costs one new wrapper.
     *
     * @return the message's offset in its queue: 0, 1, 2, ...
     * @throws NullPointerException     if {@code topic} or {@code data} is null.
     * @throws IllegalArgumentException if {@code queueId} is negative, or {@code data} is empty.
     * @throws SegmentAppendTooLongException if {@code data} is longer than the log's maxAppendLength
     *                                  (16 MiB by default).
     * @throws SegmentNameException     if the queue's segment name ({@link #segmentName}) is not a
     *                                  valid segment name (an unpaired surrogate in the topic, too long).
     *                                  A failed append leaves no queue behind.
     * @throws io.streamcache.log.LogFailedException if the log failed (the message
     *                                  was not appended).
     * @throws CacheClosedException     if the facade is closed.
     */
    public long append(final String topic, final int queueId, final ByteBuffer data) {
        if (!gate.enter()) {
            throw new CacheClosedException("message queue store is closed");
        }
        try {
            return doAppend(topic, queueId, data);
        } finally {
            gate.exit();
        }
    }

    private long doAppend(final String topic, final int queueId, final ByteBuffer data) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(data, "data");
        checkQueueId(queueId);
        final int length = data.remaining();
        if (length == 0) {
            throw new IllegalArgumentException("data.remaining()=0: a message holds at least one byte (topic=" + topic
                + " queueId=" + queueId + ")");
        }
        ensureOpen();
        MessageQueue queue = queues.get(topic, queueId);
        if (queue == null) {
            // Everything that can be checked is checked before the queue exists: a failed append leaves no trace.
            final String segment = segmentName(topic, queueId);
            SegmentNames.check(segment);
            checkLength(segment, length);
            queue = createdQueue(topic, queueId, segment);
        } else {
            checkLength(queue.segment, length);
            if (!queue.ensureCreated(store, queues)) {
                queue = createdQueue(topic, queueId, queue.segment);
            }
        }
        final Wrapped wrapper = WRAPPED.get();
        try {
            // The store's synchronous append waits with a pooled log request: nothing allocated.
            final long offset = store.append(queue.segment, wrapper.wrap(data));
            return queue.publish(offset, length, indexMemory);
        } finally {
            wrapper.release();
            // publish wrote into direct memory that the index memory keeps alive.
            Reference.reachabilityFence(indexMemory);
        }
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
        if (!gate.enter()) {
            throw new CacheClosedException("message queue store is closed");
        }
        try {
            return doGetRange(topic, queueId, offset, fetchNum);
        } finally {
            gate.exit();
        }
    }

    private Map<Integer, ByteBuffer> doGetRange(final String topic, final int queueId, final long offset, final int fetchNum) {
        Objects.requireNonNull(topic, "topic");
        checkQueueId(queueId);
        if (offset < 0) {
            throw new IllegalArgumentException("offset=" + offset + " must be >= 0 (topic=" + topic + " queueId=" + queueId + ")");
        }
        if (fetchNum < 0) {
            throw new IllegalArgumentException("fetchNum=" + fetchNum + " must be >= 0 (topic=" + topic + " queueId=" + queueId + ")");
        }
        ensureOpen();
        final MessageQueue queue = queues.get(topic, queueId);
        if (queue == null || fetchNum == 0) {
            return Collections.emptyMap();
        }
        // Acquire: count first, then the first end and the directory it was published with (or a newer one).
        final long count = queue.count;
        final long firstEnd = queue.first;
        final long directory = queue.directory;
        if (offset >= count) {
            return Collections.emptyMap();
        }
        final int n = (int) Math.min(fetchNum, count - offset);
        final int first = (int) offset;
        final long start = first == 0 ? 0 : MessageQueue.end(firstEnd, directory, first - 1);
        final long stop = MessageQueue.end(firstEnd, directory, first + n - 1);
        final ByteBuffer bytes = read(queue.segment, start, stop);
        final Map<Integer, ByteBuffer> messages = new HashMap<>(n * 2);
        long from = start;
        for (int i = 0; i < n; i++) {
            final long end = MessageQueue.end(firstEnd, directory, first + i);
            messages.put(i, bytes.slice((int) (from - start), (int) (end - from)).asReadOnlyBuffer());
            from = end;
        }
        // The chunks read above are direct memory that the index memory keeps alive.
        Reference.reachabilityFence(indexMemory);
        return messages;
    }

    /**
     * @return the messages published in a queue (0 for a queue never appended to).
     * @throws NullPointerException     if {@code topic} is null.
     * @throws IllegalArgumentException if {@code queueId} is negative.
     * @throws CacheClosedException     if the facade is closed.
     */
    public long messageCount(final String topic, final int queueId) {
        Objects.requireNonNull(topic, "topic");
        checkQueueId(queueId);
        ensureOpen();
        final MessageQueue queue = queues.get(topic, queueId);
        return queue == null ? 0 : queue.count;
    }

    /**
     * @return the number of queues (segments) known.
     * @throws CacheClosedException if the facade is closed.
     */
    public int queueCount() {
        ensureOpen();
        return queues.size();
    }

    /**
     * @return bytes of direct memory the queues' message indexes hold (8 bytes a message in chunks
     *         carved from 1 MiB slabs; outside the cache's capacity, like the log's location
     *         index), given back when this facade is garbage collected.
     */
    public long messageIndexBytes() {
        return indexMemory.bytes();
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
        // Calls in flight finish before the cache they read is closed (getRange copies out of
        // leased views of the cache's memory without a segment lock).
        if (!gate.closeAndAwait(CLOSE_WAIT.toNanos())) {
            LOG.warn("{}: closing with {} calls still in flight after {}; they may fail", this, gate.inFlight(), CLOSE_WAIT);
        }
        if (ownedCache != null) {
            store.close();
            ownedCache.close();
        }
    }

    /** For tests: the store the queues live in. */
    SegmentStore store() {
        return store;
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

    /**
     * The queue's segment created (or found); a queue whose creation failed on another thread is
     * replaced. {@code segment} is the queue's segment name, built once by the caller.
     */
    private MessageQueue createdQueue(final String topic, final int queueId, final String segment) {
        while (true) {
            final MessageQueue queue = queues.getOrCreate(topic, queueId, segment);
            if (queue.ensureCreated(store, queues)) {
                return queue;
            }
        }
    }

    /**
     * @return the queue id of a segment named {@code mq/<queueId>/<topic>} (the id in canonical
     *         decimal, as {@link #segmentName} writes it), or -1 for any other name.
     */
    static int queueIdOf(final String name, final int slash) {
        final int from = SEGMENT_PREFIX.length();
        if (slash <= from || slash - from > 10) {
            return -1;
        }
        long id = 0;
        for (int i = from; i < slash; i++) {
            final char c = name.charAt(i);
            if (c < '0' || c > '9' || (c == '0' && i == from && slash - from > 1)) {
                return -1;
            }
            id = id * 10 + (c - '0');
        }
        return id > Integer.MAX_VALUE ? -1 : (int) id;
    }

    /**
     * One thread's reusable {@link ByteBuf} over the last {@link ByteBuffer} it appended from: a
     * producer that appends from one buffer gets the same wrapper each time, its indices set to
     * the buffer's position and limit, instead of a new wrapper (and a slice of the buffer) per
     * message. Confined to its thread; the store is done with it when the append returns.
     */
    private static final class Wrapped {
        private ByteBuffer buffer;
        private ByteBuf wrapper;
        private boolean inUse;

        ByteBuf wrap(final ByteBuffer data) {
            if (inUse) {
                // Re-entered on this thread (an append from inside an append's callback): no reuse.
                return Unpooled.wrappedBuffer(data);
            }
            if (data != buffer) {
                wrapper = Unpooled.wrappedBuffer(data.duplicate().clear());
                buffer = data;
            }
            inUse = true;
            return wrapper.setIndex(data.position(), data.limit());
        }

        void release() {
            inUse = false;
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
}
