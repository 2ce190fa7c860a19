package io.streamcache.pulsar;

import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageRouter;
import org.apache.pulsar.client.api.TopicMetadata;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

/**
 * The messages of the tests and benchmark: each names its producer and sequence number, carries
 * its send time, and content derived from the two, so that a consumer checks every byte without
 * a copy of what was sent. Stateless and thread-safe.
 */
final class Messages {

    /** Producer id, sequence, send time (nanoTime of the sending JVM), content length. */
    static final int HEADER = Integer.BYTES + Long.BYTES + Long.BYTES + Integer.BYTES;
    static final String SEQUENCE = "seq";

    private Messages() {
    }

    static byte[] encode(final int producer, final long sequence, final int contentLength) {
        final ByteBuffer buffer = ByteBuffer.allocate(HEADER + contentLength);
        buffer.putInt(producer).putLong(sequence).putLong(System.nanoTime()).putInt(contentLength);
        fill(producer, sequence, buffer);
        return buffer.array();
    }

    private static void fill(final int producer, final long sequence, final ByteBuffer buffer) {
        final SplittableRandom random = new SplittableRandom(((long) producer << 40) ^ sequence);
        while (buffer.remaining() >= Long.BYTES) {
            buffer.putLong(random.nextLong());
        }
        while (buffer.hasRemaining()) {
            buffer.put((byte) random.nextInt());
        }
    }

    static int producer(final byte[] message) {
        return ByteBuffer.wrap(message).getInt(0);
    }

    static long sequence(final byte[] message) {
        return ByteBuffer.wrap(message).getLong(Integer.BYTES);
    }

    static long sentNanos(final byte[] message) {
        return ByteBuffer.wrap(message).getLong(Integer.BYTES + Long.BYTES);
    }

    /** @throws AssertionError if the content is not the one its header names */
    static void check(final byte[] message) {
        final ByteBuffer header = ByteBuffer.wrap(message);
        final int producer = header.getInt();
        final long sequence = header.getLong();
        header.getLong();
        final int length = header.getInt();
        if (length != message.length - HEADER) {
            throw new AssertionError("producer=" + producer + " seq=" + sequence + " content length=" + (message.length - HEADER) + " header says " + length);
        }
        final ByteBuffer expected = ByteBuffer.allocate(message.length);
        expected.position(HEADER);
        fill(producer, sequence, expected);
        for (int i = HEADER; i < message.length; i++) {
            if (expected.get(i) != message[i]) {
                throw new AssertionError("producer=" + producer + " seq=" + sequence + " content differs at byte " + i);
            }
        }
    }

    /** Routes sequence {@code s} to partition {@code s % partitions}: each partition holds every partitions-th message of a producer. */
    static final class BySequence implements MessageRouter {
        private static final long serialVersionUID = 1L;

        @Override
        public int choosePartition(final Message<?> msg, final TopicMetadata metadata) {
            return (int) (Long.parseLong(msg.getProperty(SEQUENCE)) % metadata.numPartitions());
        }
    }

    /** The partition index of a partitioned topic's partition name ({@code ...-partition-3} is 3). */
    static int partition(final String topic) {
        return Integer.parseInt(topic.substring(topic.lastIndexOf('-') + 1));
    }
}
