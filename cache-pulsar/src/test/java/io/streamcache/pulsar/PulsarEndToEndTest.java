package io.streamcache.pulsar;

import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageRoutingMode;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pulsar's own client against a broker whose managed ledgers live on three bookies on
 * {@code StreamcacheLedgerStorage} (ensemble 3, write quorum 3, ack quorum 2): producers on
 * partitioned topics, exclusive, shared and failover subscriptions, a consumer that starts from
 * the earliest message of a topic with a backlog while producers publish, a bookie SIGKILLed and
 * restarted and the broker restarted mid-run. Every message is checked (sequence and content);
 * no acknowledged message may be missing, and a message may repeat only as Pulsar's
 * at-least-once delivery allows (a redelivery of one already received, never a gap or a
 * reordering on an ordered subscription). Behind {@code -Dstreamcache.pulsar=true} (a few
 * minutes; docs/pulsar.md).
 */
@EnabledIfSystemProperty(named = "streamcache.pulsar", matches = "true")
class PulsarEndToEndTest {

    private static final Logger LOG = LoggerFactory.getLogger(PulsarEndToEndTest.class);
    private static final int PARTITIONS = 4;
    private static final String ORDERS = "persistent://public/default/orders";
    private static final String BACKLOG = "persistent://public/default/backlog";
    /** Messages in the backlog when its consumer starts (1 KB to 2 KB each). */
    private static final int BACKLOG_MESSAGES = Integer.getInteger("streamcache.pulsar.backlog", 6_000);
    /** Messages per second of each producer: they publish from before the first failure to after the last. */
    private static final int RATE_PER_PRODUCER = 300;

    @TempDir
    Path directory;

    /** A producer thread publishing until stopped: its acknowledged sequence numbers. */
    private static final class Publisher extends Thread {
        final int id;
        final Producer<byte[]> producer;
        final int rate;
        final int contentBase;
        volatile boolean stop;
        int count;
        final BitSet acked = new BitSet();
        final AtomicLong ackedCount = new AtomicLong();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<?>> sends = new ArrayList<>();

        Publisher(final int id, final Producer<byte[]> producer, final int rate, final int contentBase) {
            super("publisher-" + id);
            this.id = id;
            this.producer = producer;
            this.rate = rate;
            this.contentBase = contentBase;
        }

        @Override
        public void run() {
            final long start = System.nanoTime();
            int seq = 0;
            for (; !stop; seq++) {
                final long due = start + seq * (1_000_000_000L / rate);
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    sleepNanos(wait);
                }
                final int s = seq;
                final byte[] payload = Messages.encode(id, seq, contentBase + (int) ((seq * 7919L) % contentBase));
                sends.add(producer.newMessage().property(Messages.SEQUENCE, Long.toString(seq)).value(payload).sendAsync()
                    .whenComplete((messageId, failure) -> {
                        if (failure != null) {
                            failures.add(failure);
                        } else {
                            synchronized (acked) {
                                acked.set(s);
                            }
                            ackedCount.incrementAndGet();
                        }
                    }));
            }
            count = seq;
        }
    }

    private static void sleepNanos(final long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(Math.min(nanos, 10_000_000L));
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * What one subscription received. {@code ordered}: each consumer must see, per partition and
     * producer, every message after the last it saw (a step of {@link #PARTITIONS}) or one it
     * already saw (a redelivery); a failover consumer taking a partition over may start later,
     * at a message after which the subscription as a whole has seen everything before.
     */
    private static final class Received {
        final String name;
        final boolean ordered;
        final boolean strict;
        final Map<Long, Integer> counts = new ConcurrentHashMap<>();
        final Map<String, Long> lastByConsumer = new HashMap<>();
        final AtomicLong duplicates = new AtomicLong();
        final List<String> violations = new CopyOnWriteArrayList<>();

        Received(final String name, final boolean ordered, final boolean strict) {
            this.name = name;
            this.ordered = ordered;
            this.strict = strict;
        }

        synchronized void accept(final String consumer, final Message<byte[]> message) {
            final byte[] value = message.getValue();
            Messages.check(value);
            final int producer = Messages.producer(value);
            final long seq = Messages.sequence(value);
            final int partition = Messages.partition(message.getTopicName());
            if (seq % PARTITIONS != partition) {
                violations.add(name + ": producer=" + producer + " seq=" + seq + " on partition=" + partition);
            }
            final long key = ((long) producer << 40) | seq;
            final int seen = counts.merge(key, 1, Integer::sum);
            if (seen > 1) {
                duplicates.incrementAndGet();
            }
            if (!ordered) {
                return;
            }
            final String stream = consumer + "/" + partition + "/" + producer;
            final long last = lastByConsumer.getOrDefault(stream, (long) partition - PARTITIONS);
            if (seq <= last) {
                if (seen == 1) {
                    violations.add(name + ": " + stream + " seq=" + seq + " after " + last + ", never received before");
                }
                return;
            }
            if (seq != last + PARTITIONS && (strict || !seenAllBefore(producer, seq))) {
                violations.add(name + ": " + stream + " seq=" + seq + " after " + last + " (a gap or a reordering)");
            }
            lastByConsumer.put(stream, seq);
        }

        private boolean seenAllBefore(final int producer, final long seq) {
            for (long s = seq - PARTITIONS; s >= 0; s -= PARTITIONS) {
                if (!counts.containsKey(((long) producer << 40) | s)) {
                    return false;
                }
            }
            return true;
        }

        long missing(final List<Publisher> publishers) {
            long missing = 0;
            for (final Publisher p : publishers) {
                synchronized (p.acked) {
                    for (int s = p.acked.nextSetBit(0); s >= 0; s = p.acked.nextSetBit(s + 1)) {
                        if (!counts.containsKey(((long) p.id << 40) | s)) {
                            missing++;
                        }
                    }
                }
            }
            return missing;
        }
    }

    /** A thread receiving from one consumer until stopped, acknowledging what it checked. */
    private static final class Receiver extends Thread {
        final Consumer<byte[]> consumer;
        final Received received;
        final List<Throwable> failures;
        volatile boolean stop;

        Receiver(final Consumer<byte[]> consumer, final Received received, final List<Throwable> failures) {
            super("receiver-" + consumer.getConsumerName());
            this.consumer = consumer;
            this.received = received;
            this.failures = failures;
        }

        @Override
        public void run() {
            try {
                while (!stop) {
                    final Message<byte[]> message = consumer.receive(200, TimeUnit.MILLISECONDS);
                    if (message != null) {
                        received.accept(consumer.getConsumerName(), message);
                        consumer.acknowledgeAsync(message);
                    }
                }
            } catch (final Throwable t) {
                failures.add(t);
            }
        }
    }

    @Test
    void everyAcknowledgedMessageArrivesAcrossABookieKillAndABrokerRestart() throws Exception {
        final long started = System.nanoTime();
        try (PulsarCluster cluster = new PulsarCluster(directory, "streamcache", 3, 64);
             PulsarClient client = cluster.client()) {
            LOG.info("cluster up in {} s", (System.nanoTime() - started) / 1_000_000_000L);
            final List<Throwable> failures = new CopyOnWriteArrayList<>();
            final List<Receiver> receivers = new ArrayList<>();
            final Received exclusive = new Received("exclusive", true, true);
            final Received shared = new Received("shared", false, false);
            final Received failover = new Received("failover", true, false);
            final Received catchUp = new Received("catch-up", true, true);
            receivers.add(receiver(client, ORDERS, "exclusive", SubscriptionType.Exclusive, "ex-0", exclusive, failures));
            for (int i = 0; i < 2; i++) {
                receivers.add(receiver(client, ORDERS, "shared", SubscriptionType.Shared, "sh-" + i, shared, failures));
                receivers.add(receiver(client, ORDERS, "failover", SubscriptionType.Failover, "fo-" + i, failover, failures));
            }
            // The catch-up subscription exists from the start (its cursor holds the backlog); its consumer comes later.
            client.newConsumer(Schema.BYTES).topic(BACKLOG).subscriptionName("catch-up")
                .subscriptionType(SubscriptionType.Exclusive).subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe().close();
            for (final Receiver r : receivers) {
                r.start();
            }
            final List<Publisher> orders = List.of(
                new Publisher(1, producer(client, ORDERS, "orders-1"), RATE_PER_PRODUCER, 200),
                new Publisher(2, producer(client, ORDERS, "orders-2"), RATE_PER_PRODUCER, 200));
            final Publisher backlog = new Publisher(3, producer(client, BACKLOG, "backlog-3"), RATE_PER_PRODUCER, 1024);
            for (final Publisher p : orders) {
                p.start();
            }
            backlog.start();

            awaitAcked(backlog, BACKLOG_MESSAGES);
            LOG.info("backlog of {} messages: the catch-up consumer starts, the bookies fail while it catches up", backlog.ackedCount.get());
            final Receiver catchUpReceiver = receiver(client, BACKLOG, "catch-up", SubscriptionType.Exclusive, "cu-0", catchUp, failures);
            receivers.add(catchUpReceiver);
            catchUpReceiver.start();

            LOG.info("SIGKILL of bookie 1 at {} acknowledged orders", orders.get(0).ackedCount.get());
            cluster.killBookie(1);
            Thread.sleep(2_000);
            cluster.startBookie(1);
            LOG.info("bookie 1 restarted");

            final long beforeRestart = orders.get(0).ackedCount.get();
            awaitAcked(orders.get(0), beforeRestart + 3L * RATE_PER_PRODUCER);
            LOG.info("broker restart at {} acknowledged orders", orders.get(0).ackedCount.get());
            cluster.restartBroker();
            LOG.info("broker restarted");
            final long afterRestart = orders.get(0).ackedCount.get();
            awaitAcked(orders.get(0), afterRestart + 3L * RATE_PER_PRODUCER);

            final List<Publisher> all = new ArrayList<>(orders);
            all.add(backlog);
            for (final Publisher p : all) {
                p.stop = true;
            }
            for (final Publisher p : all) {
                p.join();
                CompletableFuture.allOf(p.sends.toArray(new CompletableFuture<?>[0])).exceptionally(t -> null).get(300, TimeUnit.SECONDS);
                p.producer.close();
                assertEquals(List.of(), p.failures, "sends of producer " + p.id + " that failed");
                assertEquals(p.count, p.ackedCount.get(), "acknowledged sends of producer " + p.id);
            }
            LOG.info("all {} messages acknowledged", all.stream().mapToLong(p -> p.count).sum());

            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
            while (System.nanoTime() < deadline
                && (exclusive.missing(orders) + shared.missing(orders) + failover.missing(orders) + catchUp.missing(List.of(backlog)) > 0)) {
                Thread.sleep(200);
            }
            for (final Receiver r : receivers) {
                r.stop = true;
                r.join();
                r.consumer.close();
            }
            assertEquals(List.of(), failures, "receivers that failed");
            for (final Received r : List.of(exclusive, shared, failover, catchUp)) {
                final List<Publisher> publishers = r == catchUp ? List.of(backlog) : orders;
                LOG.info("{}: {} distinct, {} duplicates (redeliveries)", r.name, r.counts.size(), r.duplicates.get());
                assertEquals(List.of(), r.violations, r.name + ": order violations");
                assertEquals(0, r.missing(publishers), r.name + ": acknowledged messages never received");
                final long sent = publishers.stream().mapToLong(p -> p.count).sum();
                assertEquals(sent, r.counts.size(), r.name + ": distinct messages received");
            }
            assertTrue(exclusive.counts.size() > 0);
            LOG.info("end to end run in {} s", (System.nanoTime() - started) / 1_000_000_000L);
        }
    }

    private static Producer<byte[]> producer(final PulsarClient client, final String topic, final String name) throws Exception {
        return client.newProducer(Schema.BYTES).topic(topic).producerName(name)
            .messageRoutingMode(MessageRoutingMode.CustomPartition).messageRouter(new Messages.BySequence())
            .sendTimeout(0, TimeUnit.SECONDS).blockIfQueueFull(true).maxPendingMessages(2_000)
            .enableBatching(true).batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS)
            .create();
    }

    private static Receiver receiver(final PulsarClient client, final String topic, final String subscription, final SubscriptionType type,
                                     final String name, final Received received, final List<Throwable> failures) throws Exception {
        final Consumer<byte[]> consumer = client.newConsumer(Schema.BYTES).topic(topic).subscriptionName(subscription)
            .subscriptionType(type).consumerName(name).subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
            .receiverQueueSize(500).subscribe();
        return new Receiver(consumer, received, failures);
    }

    private static void awaitAcked(final Publisher p, final long count) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        while (p.ackedCount.get() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("producer " + p.id + " acknowledged " + p.ackedCount.get() + " of " + count + " in 300 s");
            }
            Thread.sleep(50);
        }
    }
}
