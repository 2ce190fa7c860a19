package io.streamcache.segmentstore.queue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The queue table against a HashMap of (topic, id), and under contention. */
@Timeout(60)
class QueueTableTest {
    private static final String[] TOPICS = {"a", "orders", "t/with/slash", ""};

    private record Key(String topic, int queueId) {
    }

    private static int id(final Random random) {
        return switch (random.nextInt(4)) {
            case 0 -> random.nextInt(70);
            case 1 -> random.nextInt(5_000);
            case 2 -> QueueTable.DENSE_LIMIT - 2 + random.nextInt(4);
            default -> Integer.MAX_VALUE - random.nextInt(3);
        };
    }

    @Test
    void shouldMatchAMapUnderRandomInsertsLookupsAndRemovals() {
        final Random random = new Random(14);
        final QueueTable table = new QueueTable();
        final Map<Key, MessageQueue> model = new HashMap<>();
        for (int step = 0; step < 50_000; step++) {
            final Key key = new Key(TOPICS[random.nextInt(TOPICS.length)], id(random));
            switch (random.nextInt(3)) {
                case 0 -> {
                    final MessageQueue got =
                        table.getOrCreate(key.topic(), key.queueId(), MessageQueueStore.segmentName(key.topic(), key.queueId()));
                    final MessageQueue expected = model.computeIfAbsent(key, k -> got);
                    assertSame(expected, got, key.toString());
                    assertEquals(MessageQueueStore.segmentName(key.topic(), key.queueId()), got.segment);
                }
                case 1 -> assertSame(model.get(key), table.get(key.topic(), key.queueId()), key.toString());
                default -> {
                    final MessageQueue present = model.remove(key);
                    if (present != null) {
                        table.remove(present);
                        // Removing a queue that is no longer in the table changes nothing.
                        table.remove(present);
                    }
                    assertNull(table.get(key.topic(), key.queueId()));
                }
            }
            assertEquals(model.size(), table.size());
        }
        model.forEach((key, queue) -> assertSame(queue, table.get(key.topic(), key.queueId())));
    }

    @Test
    void shouldNotFindAQueueOfAnotherTopicOrId() {
        final QueueTable table = new QueueTable();
        final MessageQueue q = table.getOrCreate("t", 64, MessageQueueStore.segmentName("t", 64));
        assertNull(table.get("t", 63));
        assertNull(table.get("t", 65));
        assertNull(table.get("t", 0));
        assertNull(table.get("u", 64));
        assertNull(table.get("t", 1 << 30));
        assertSame(q, table.get(new String("t"), 64), "found by the topic's value, not its identity");
    }

    /** Threads race to create the same queues: each (topic, id) gets exactly one queue, seen whole by every thread. */
    @Test
    void shouldGiveEveryRacingThreadTheSameQueue() throws Exception {
        final int threads = 8;
        final int ids = 3_000;
        for (int round = 0; round < 5; round++) {
            final QueueTable table = new QueueTable();
            final ConcurrentHashMap<Key, MessageQueue> seen = new ConcurrentHashMap<>();
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final CountDownLatch start = new CountDownLatch(1);
            final List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final long seed = round * 100L + t;
                final Thread worker = new Thread(() -> {
                    try {
                        final Random random = new Random(seed);
                        start.await();
                        for (int i = 0; i < ids * 2; i++) {
                            final String topic = TOPICS[random.nextInt(2)];
                            final int id = random.nextInt(8) == 0 ? QueueTable.DENSE_LIMIT + random.nextInt(ids) : random.nextInt(ids);
                            final MessageQueue found = table.get(topic, id);
                            final MessageQueue got = table.getOrCreate(topic, id, MessageQueueStore.segmentName(topic, id));
                            if (found != null && found != got) {
                                throw new AssertionError("a lookup found another queue than the table holds: " + topic + "/" + id);
                            }
                            if (!got.segment.equals(MessageQueueStore.segmentName(topic, id))) {
                                throw new AssertionError("a queue seen with the wrong name: " + got.segment);
                            }
                            final MessageQueue first = seen.putIfAbsent(new Key(topic, id), got);
                            if (first != null && first != got) {
                                throw new AssertionError("two queues for " + topic + "/" + id);
                            }
                        }
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                worker.start();
                workers.add(worker);
            }
            start.countDown();
            for (final Thread w : workers) {
                w.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals(seen.size(), table.size());
        }
    }
}
