package io.streamcache.segmentstore.queue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A queue's publication: in byte order, whatever order the appending threads arrive in. */
@Timeout(60)
class MessageQueueTest {
    @Test
    void shouldNumberMessagesInByteOrderWhenTheirThreadsArriveShuffled() throws Exception {
        final Random random = new Random(7);
        for (int round = 0; round < 20; round++) {
            final int messages = 1 + random.nextInt(40);
            final long[] offsets = new long[messages];
            final int[] lengths = new int[messages];
            long at = 0;
            for (int i = 0; i < messages; i++) {
                offsets[i] = at;
                lengths[i] = 1 + random.nextInt(1000);
                at += lengths[i];
            }
            final List<Integer> order = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                order.add(i);
            }
            Collections.shuffle(order, random);
            final MessageQueue queue = new MessageQueue("mq/0/t");
            final long[] indexes = new long[messages];
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final List<Thread> threads = new ArrayList<>();
            for (final int i : order) {
                final Thread thread = new Thread(() -> {
                    try {
                        indexes[i] = queue.publish(offsets[i], lengths[i]);
                    } catch (final Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                thread.start();
                threads.add(thread);
            }
            for (final Thread thread : threads) {
                thread.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals(messages, queue.count);
            for (int i = 0; i < messages; i++) {
                assertEquals(i, indexes[i], "message at offset " + offsets[i]);
                assertEquals(offsets[i] + lengths[i], MessageQueue.end(queue.first, queue.ends, queue.chunks, i));
            }
        }
    }

    @Test
    void shouldKeepTheFirstEndInTheQueueAndTheOthersInDoublingChunks() {
        final MessageQueue queue = new MessageQueue("mq/0/t");
        assertEquals(0, queue.ends.length, "no index before the first message");
        assertEquals(0, queue.publish(0, 10));
        assertEquals(0, queue.ends.length, "nor for the first message: its end is a field");
        assertNull(queue.chunks);
        assertEquals(10, queue.first);
        assertEquals(1, queue.publish(10, 10));
        assertEquals(2, queue.ends.length, "messages 1 and 2");
        assertEquals(2, queue.publish(20, 10));
        assertNull(queue.chunks, "no directory for three messages");
        for (int i = 3; i < 100; i++) {
            assertEquals(i, queue.publish(10L * i, 10));
        }
        assertEquals(2, queue.ends.length, "never grown");
        // Messages 3..6, 7..14, 15..30, 31..62, 63..126: chunks of 4, 8, 16, 32, 64.
        final long[][] chunks = queue.chunks;
        for (int k = 2; k <= 6; k++) {
            assertEquals(1 << k, chunks[k - 2].length, "chunk " + k);
        }
        assertEquals(8, chunks.length, "the directory doubled once from 4");
        assertEquals(1000, chunks[4][99 + 1 - 64]);
        for (int i = 0; i < 100; i++) {
            assertEquals(10L * (i + 1), MessageQueue.end(queue.first, queue.ends, queue.chunks, i));
        }
    }

    @Test
    void shouldMapMessagesToChunksWithoutGapsOrOverlaps() {
        int expectedChunk = 1;
        int slot = 0;
        for (int i = 1; i < 20 * MessageQueue.CHUNK; i++) {
            final int k = MessageQueue.chunk(i);
            if (k != expectedChunk) {
                assertEquals(MessageQueue.chunkLength(expectedChunk), slot, "chunk " + expectedChunk + " filled before the next");
                assertEquals(expectedChunk + 1, k, "message " + i);
                expectedChunk = k;
                slot = 0;
            }
            slot++;
        }
        assertEquals(MessageQueue.CHUNK, MessageQueue.chunkLength(9));
        assertEquals(MessageQueue.CHUNK, MessageQueue.chunkLength(30));
        assertEquals(2, MessageQueue.chunkLength(1));
    }

    /** Past CHUNK messages the ends go to fixed chunks: the first array stops growing, nothing is copied. */
    @Test
    void shouldKeepLongQueuesInChunksThatAreNeverCopied() {
        final MessageQueue queue = new MessageQueue("mq/0/t");
        final int messages = 5 * MessageQueue.CHUNK + 3;
        long[] firstChunkSeen = null;
        for (int i = 0; i < messages; i++) {
            assertEquals(i, queue.publish(7L * i, 7));
            if (i == 2 * MessageQueue.CHUNK) {
                firstChunkSeen = queue.chunks[0];
            }
        }
        assertEquals(2, queue.ends.length, "the first array holds messages 1 and 2");
        // Chunks of 4 .. 512 (k = 2..9) hold messages 3..1022, then 512 each: 1023..1534, .. 2559..2562.
        assertEquals(8 + 4, java.util.Arrays.stream(queue.chunks).filter(java.util.Objects::nonNull).count());
        org.junit.jupiter.api.Assertions.assertSame(firstChunkSeen, queue.chunks[0], "a chunk is never copied");
        for (int i = 0; i < messages; i++) {
            assertEquals(7L * (i + 1), MessageQueue.end(queue.first, queue.ends, queue.chunks, i));
        }
    }

    /** A reader that reads count, then the arrays, sees every counted end while the queue grows through chunks. */
    @Test
    void shouldShowEveryCountedEndToAConcurrentReader() throws Exception {
        final MessageQueue queue = new MessageQueue("mq/0/t");
        final int messages = 4 * MessageQueue.CHUNK;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread reader = new Thread(() -> {
            long seen = 0;
            while (seen < messages && failure.get() == null) {
                final long count = queue.count;
                final long first = queue.first;
                final long[] ends = queue.ends;
                final long[][] chunks = queue.chunks;
                for (long i = Math.max(0, count - 3); i < count; i++) {
                    final long end = MessageQueue.end(first, ends, chunks, (int) i);
                    if (end != 3 * (i + 1)) {
                        failure.compareAndSet(null, new AssertionError("message " + i + " end " + end));
                    }
                }
                seen = count;
            }
        });
        reader.start();
        for (int i = 0; i < messages; i++) {
            queue.publish(3L * i, 3);
        }
        reader.join();
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    @Test
    void shouldRefuseACompletionBelowThePublishedEnd() {
        final MessageQueue queue = new MessageQueue("mq/0/t");
        queue.publish(0, 10);
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> queue.publish(5, 10));
        assertEquals(1, queue.count, "nothing published");
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("mq/0/t") && e.getMessage().contains("offset=5"),
            e.getMessage());
    }

    /**
     * Queues of random lengths (up to three chunks) against a list of ends: a reader reading
     * count, then first, ends and chunks, sees for every counted message the end the list holds,
     * the first message's included, while the writer grows the index through its slots and chunks.
     */
    @Test
    void shouldMatchAListOfEndsForEveryReaderSnapshot() throws Exception {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(11);
        for (int round = 0; round < 30; round++) {
            final int messages = 1 + random.nextInt(3 * MessageQueue.CHUNK);
            final long[] reference = new long[messages];
            long at = 0;
            for (int i = 0; i < messages; i++) {
                at += 1 + random.nextInt(20_000);
                reference[i] = at;
            }
            final MessageQueue queue = new MessageQueue("mq/" + round + "/t");
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread reader = new Thread(() -> {
                final java.util.SplittableRandom picks = new java.util.SplittableRandom(messages);
                long count = 0;
                while (count < messages && failure.get() == null) {
                    count = queue.count;
                    final long first = queue.first;
                    final long[] ends = queue.ends;
                    final long[][] chunks = queue.chunks;
                    for (int k = 0; k < 8 && count > 0; k++) {
                        final int i = k == 0 ? 0 : k == 1 ? (int) count - 1 : picks.nextInt((int) count);
                        final long end = MessageQueue.end(first, ends, chunks, i);
                        if (end != reference[i]) {
                            failure.compareAndSet(null, new AssertionError("message " + i + " of " + count + ": end " + end
                                + ", expected " + reference[i]));
                        }
                    }
                }
            });
            reader.start();
            long offset = 0;
            for (int i = 0; i < messages; i++) {
                assertEquals(i, queue.publish(offset, (int) (reference[i] - offset)));
                offset = reference[i];
            }
            reader.join();
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            for (int i = 0; i < messages; i++) {
                assertEquals(reference[i], MessageQueue.end(queue.first, queue.ends, queue.chunks, i));
            }
        }
    }
}
