package io.streamcache.segmentstore.queue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The queues of a {@link MessageQueueStore} by (topic, queueId), found without building the
 * segment name and without allocating: a map of topics, and per topic the queues by id in pages.
 *
 * <pre>
 *  topics: ConcurrentHashMap&lt;String, Topic&gt;        (one node per topic, not per queue)
 *  Topic:  pages (volatile) --&gt; [ page 0 | page 1 | null | page 3 | ... ]   directory, grown by doubling
 *                                  |
 *                                  v
 *                              [ q0 | q1 | null | q3 | ... q63 ]   64 slots, ids 64p .. 64p+63
 *          large: ConcurrentHashMap&lt;Integer, MessageQueue&gt;        ids &gt;= 2^20 (boxed: allocates)
 * </pre>
 * A dense queue costs one 4-byte slot here (plus its page's share of the header); ids of
 * {@value #DENSE_LIMIT} and above, which would make the directory large, go to a per-topic map.
 *
 * <p><b>Threading:</b> thread-safe. Lookups take no lock: the directory is read with a volatile
 * load and a slot with an acquire load; inserts and removals of a topic's queues are serialized
 * by the topic's monitor and write slots with release stores (a directory or page is filled in
 * before it is published), so a queue found is seen whole.
 */
final class QueueTable {
    /** Queue ids below this live in pages; the others in the topic's map. */
    static final int DENSE_LIMIT = 1 << 20;
    private static final int PAGE_SHIFT = 6;
    private static final int PAGE_SIZE = 1 << PAGE_SHIFT;
    private static final MessageQueue[][] NO_PAGES = new MessageQueue[0][];
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(MessageQueue[].class);
    private static final VarHandle PAGE = MethodHandles.arrayElementVarHandle(MessageQueue[][].class);

    private final ConcurrentHashMap<String, Topic> topics = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();

    /** One topic's queues. */
    private static final class Topic {
        volatile MessageQueue[][] pages = NO_PAGES;
        /** Created under the monitor on the first large id. */
        volatile ConcurrentHashMap<Integer, MessageQueue> large;
    }

    /** @return the queue, or null if there is none. */
    MessageQueue get(final String topic, final int queueId) {
        final Topic t = topics.get(topic);
        return t == null ? null : get(t, queueId);
    }

    private static MessageQueue get(final Topic t, final int queueId) {
        if (queueId >= DENSE_LIMIT) {
            final ConcurrentHashMap<Integer, MessageQueue> large = t.large;
            return large == null ? null : large.get(queueId);
        }
        final MessageQueue[][] pages = t.pages;
        final int index = queueId >>> PAGE_SHIFT;
        if (index >= pages.length) {
            return null;
        }
        final MessageQueue[] page = (MessageQueue[]) PAGE.getAcquire(pages, index);
        return page == null ? null : (MessageQueue) SLOT.getAcquire(page, queueId & (PAGE_SIZE - 1));
    }

    /**
     * @param segment the queue's segment name ({@link MessageQueueStore#segmentName}), which the
     *                caller built once to check it.
     * @return the queue, made over {@code segment} and put in the table if there was none.
     */
    MessageQueue getOrCreate(final String topic, final int queueId, final String segment) {
        final MessageQueue found = get(topic, queueId);
        if (found != null) {
            return found;
        }
        Topic t = topics.get(topic);
        if (t == null) {
            t = topics.computeIfAbsent(topic, ignored -> new Topic());
        }
        synchronized (t) {
            final MessageQueue again = get(t, queueId);
            if (again != null) {
                return again;
            }
            final MessageQueue queue = new MessageQueue(segment);
            put(t, queueId, queue);
            size.incrementAndGet();
            return queue;
        }
    }

    /** Puts a queue rebuilt from the store; the caller checked that there is none. */
    void putRebuilt(final String topic, final int queueId, final MessageQueue queue) {
        final Topic t = topics.computeIfAbsent(topic, ignored -> new Topic());
        synchronized (t) {
            put(t, queueId, queue);
            size.incrementAndGet();
        }
    }

    /** Removes {@code queue} if it is still in the table (its segment name says where). */
    void remove(final MessageQueue queue) {
        final String name = queue.segment;
        final int slash = name.indexOf('/', MessageQueueStore.SEGMENT_PREFIX.length());
        final int queueId = Integer.parseInt(name, MessageQueueStore.SEGMENT_PREFIX.length(), slash, 10);
        final Topic t = topics.get(name.substring(slash + 1));
        if (t == null) {
            return;
        }
        synchronized (t) {
            if (get(t, queueId) != queue) {
                return;
            }
            if (queueId >= DENSE_LIMIT) {
                t.large.remove(queueId, queue);
            } else {
                SLOT.setRelease(t.pages[queueId >>> PAGE_SHIFT], queueId & (PAGE_SIZE - 1), (MessageQueue) null);
            }
            size.decrementAndGet();
        }
    }

    /** @return the queues in the table. */
    int size() {
        return size.get();
    }

    /** Under the topic's monitor. */
    private static void put(final Topic t, final int queueId, final MessageQueue queue) {
        if (queueId >= DENSE_LIMIT) {
            ConcurrentHashMap<Integer, MessageQueue> large = t.large;
            if (large == null) {
                large = new ConcurrentHashMap<>();
                t.large = large;
            }
            large.put(queueId, queue);
            return;
        }
        final int page = queueId >>> PAGE_SHIFT;
        MessageQueue[][] pages = t.pages;
        if (page >= pages.length) {
            final MessageQueue[][] grown = new MessageQueue[Math.max(page + 1, 2 * pages.length)][];
            System.arraycopy(pages, 0, grown, 0, pages.length);
            pages = grown;
        }
        MessageQueue[] slots = pages[page];
        if (slots == null) {
            slots = new MessageQueue[PAGE_SIZE];
            PAGE.setRelease(pages, page, slots);
        }
        SLOT.setRelease(slots, queueId & (PAGE_SIZE - 1), queue);
        t.pages = pages;
    }
}
