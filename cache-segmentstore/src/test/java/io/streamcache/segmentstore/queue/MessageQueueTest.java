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
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A queue's publication: in byte order, whatever order the appending threads arrive in. */
@Timeout(60)
class MessageQueueTest {
    /** The index memory of the tests' queues (one store's worth). */
    private static final MessageIndexMemory MEMORY = new MessageIndexMemory();

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
                        indexes[i] = queue.publish(offsets[i], lengths[i], MEMORY);
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
                assertEquals(offsets[i] + lengths[i], MessageQueue.end(queue.first, queue.directory, i));
            }
        }
    }

    @Test
    void shouldKeepTheFirstEndInTheQueueAndTheOthersInDoublingChunks() {
        final MessageIndexMemory memory = new MessageIndexMemory();
        final MessageQueue queue = new MessageQueue("mq/0/t");
        assertEquals(0, queue.directory, "no index before the first message");
        assertEquals(0, queue.publish(0, 10, memory));
        assertEquals(0, queue.directory, "nor for the first message: its end is a field");
        assertEquals(0, memory.bytes(), "no slab taken yet");
        assertEquals(10, queue.first);
        assertEquals(1, queue.publish(10, 10, memory));
        final long firstDirectory = queue.directory;
        assertEquals(MessageIndexMemory.SLAB_BYTES, memory.bytes(), "the first slab");
        assertEquals(2, queue.publish(20, 10, memory));
        for (int i = 3; i < 7; i++) {
            assertEquals(i, queue.publish(10L * i, 10, memory));
        }
        assertEquals(firstDirectory, queue.directory, "chunks 1 and 2 (messages 1..6) in the first directory");
        assertEquals(7, queue.publish(70, 10, memory));
        org.junit.jupiter.api.Assertions.assertNotEquals(firstDirectory, queue.directory, "chunk 3 (message 7) outgrew the directory of 2");
        for (int i = 8; i < 100; i++) {
            assertEquals(i, queue.publish(10L * i, 10, memory));
        }
        // Messages 1..2, 3..6, 7..14, 15..30, 31..62, 63..126: chunks of 2, 4, 8, 16, 32, 64.
        assertEquals(2, MessageQueue.directoryCapacity(1));
        assertEquals(2, MessageQueue.directoryCapacity(2));
        assertEquals(4, MessageQueue.directoryCapacity(3));
        assertEquals(8, MessageQueue.directoryCapacity(6));
        assertEquals(16, MessageQueue.directoryCapacity(9));
        for (int k = 1; k <= 6; k++) {
            org.junit.jupiter.api.Assertions.assertNotEquals(0, MessageQueue.chunkAddress(queue.directory, k), "chunk " + k);
        }
        assertEquals(0, MessageQueue.chunkAddress(queue.directory, 7), "chunk 7 not made (directory of 8)");
        for (int i = 0; i < 100; i++) {
            assertEquals(10L * (i + 1), MessageQueue.end(queue.first, queue.directory, i));
        }
        for (int i = 0; i < 3; i++) {
            assertEquals(10L * (i + 1), MessageQueue.end(queue.first, firstDirectory, i), "an old directory stays readable");
        }
        // The ends are memory the index memory keeps alive (the facade keeps its own reachable the same way).
        java.lang.ref.Reference.reachabilityFence(memory);
    }

    /** Queues taking chunks from one memory on many threads get chunks that never overlap, across slabs. */
    @Test
    void shouldHandOutChunksThatNeverOverlapUnderContention() throws Exception {
        final MessageIndexMemory memory = new MessageIndexMemory();
        final int threads = 8;
        final int queuesPerThread = 40;
        final int messages = 1200;
        final MessageQueue[][] queues = new MessageQueue[threads][queuesPerThread];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final MessageQueue[] mine = queues[t];
            final int thread = t;
            final Thread worker = new Thread(() -> {
                try {
                    for (int q = 0; q < mine.length; q++) {
                        mine[q] = new MessageQueue("mq/" + q + "/" + thread);
                    }
                    for (int i = 0; i < messages; i++) {
                        for (int q = 0; q < mine.length; q++) {
                            // Each queue's ends encode (thread, queue, message): an overlap overwrites another's.
                            mine[q].publish(i == 0 ? 0 : MessageQueue.end(mine[q].first, mine[q].directory, i - 1), length(thread, q, i),
                                memory);
                        }
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            worker.start();
            running.add(worker);
        }
        for (final Thread worker : running) {
            worker.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertTrue(memory.bytes() > MessageIndexMemory.SLAB_BYTES, "several slabs: " + memory.bytes());
        for (int t = 0; t < threads; t++) {
            for (int q = 0; q < queuesPerThread; q++) {
                long end = 0;
                for (int i = 0; i < messages; i++) {
                    end += length(t, q, i);
                    assertEquals(end, MessageQueue.end(queues[t][q].first, queues[t][q].directory, i), "thread " + t + " queue " + q + " message " + i);
                }
            }
        }
        java.lang.ref.Reference.reachabilityFence(memory);
    }

    private static int length(final int thread, final int queue, final int message) {
        return 1 + ((thread * 7919 + queue * 104_729 + message * 31) & 0xFFFF);
    }

    @Test
    void shouldRefuseSizesThatAreNotPositiveMultiplesOf8AndGiveLargeOnesABlock() {
        final MessageIndexMemory memory = new MessageIndexMemory();
        assertThrows(IllegalArgumentException.class, () -> memory.take(0));
        assertThrows(IllegalArgumentException.class, () -> memory.take(12));
        assertThrows(IllegalArgumentException.class, () -> memory.take(-8));
        assertEquals(0, memory.bytes(), "nothing taken");
        memory.take(MessageIndexMemory.LARGE + 8);
        assertEquals(MessageIndexMemory.LARGE + 8, memory.bytes(), "a large block of its own, no slab");
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

    /** Past CHUNK messages the ends go to fixed chunks of CHUNK slots: a chunk never moves, nothing is copied. */
    @Test
    void shouldKeepLongQueuesInChunksThatAreNeverCopied() {
        final MessageQueue queue = new MessageQueue("mq/0/t");
        final int messages = 5 * MessageQueue.CHUNK + 3;
        long firstChunkSeen = 0;
        for (int i = 0; i < messages; i++) {
            assertEquals(i, queue.publish(7L * i, 7, MEMORY));
            if (i == 2 * MessageQueue.CHUNK) {
                firstChunkSeen = MessageQueue.chunkAddress(queue.directory, 9);
            }
        }
        // Chunks of 2 .. 512 (k = 1..9) hold messages 1..1022, then 512 each: 1023..1534, .. 2559..2562 (k = 10..13).
        for (int k = 1; k <= 13; k++) {
            org.junit.jupiter.api.Assertions.assertNotEquals(0, MessageQueue.chunkAddress(queue.directory, k), "chunk " + k);
        }
        assertEquals(0, MessageQueue.chunkAddress(queue.directory, 14));
        assertEquals(firstChunkSeen, MessageQueue.chunkAddress(queue.directory, 9), "a chunk is never moved");
        for (int i = 0; i < messages; i++) {
            assertEquals(7L * (i + 1), MessageQueue.end(queue.first, queue.directory, i));
        }
    }

    /** A queue past 512 chunks (~262,000 messages) gets its directory from a large block of the memory. */
    @Test
    void shouldGrowTheDirectoryPastASlabChunk() {
        final MessageIndexMemory memory = new MessageIndexMemory();
        final MessageQueue queue = new MessageQueue("mq/0/t");
        final int messages = 600 * MessageQueue.CHUNK;
        for (int i = 0; i < messages; i++) {
            queue.publish(5L * i, 5, memory);
        }
        assertEquals(1024, MessageQueue.directoryCapacity(MessageQueue.chunk(messages - 1)));
        assertTrue(memory.bytes() >= (long) messages * Long.BYTES + 1024 * Long.BYTES, "chunks and the directory: " + memory.bytes());
        for (int i = 0; i < messages; i += 97) {
            assertEquals(5L * (i + 1), MessageQueue.end(queue.first, queue.directory, i));
        }
        assertEquals(5L * messages, MessageQueue.end(queue.first, queue.directory, messages - 1));
        java.lang.ref.Reference.reachabilityFence(memory);
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
                final long directory = queue.directory;
                for (long i = Math.max(0, count - 3); i < count; i++) {
                    final long end = MessageQueue.end(first, directory, (int) i);
                    if (end != 3 * (i + 1)) {
                        failure.compareAndSet(null, new AssertionError("message " + i + " end " + end));
                    }
                }
                seen = count;
            }
        });
        reader.start();
        for (int i = 0; i < messages; i++) {
            queue.publish(3L * i, 3, MEMORY);
        }
        reader.join();
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    @Test
    void shouldRefuseACompletionBelowThePublishedEnd() {
        final MessageQueue queue = new MessageQueue("mq/0/t");
        queue.publish(0, 10, MEMORY);
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> queue.publish(5, 10, MEMORY));
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
                    final long directory = queue.directory;
                    for (int k = 0; k < 8 && count > 0; k++) {
                        final int i = k == 0 ? 0 : k == 1 ? (int) count - 1 : picks.nextInt((int) count);
                        final long end = MessageQueue.end(first, directory, i);
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
                assertEquals(i, queue.publish(offset, (int) (reference[i] - offset), MEMORY));
                offset = reference[i];
            }
            reader.join();
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            for (int i = 0; i < messages; i++) {
                assertEquals(reference[i], MessageQueue.end(queue.first, queue.directory, i));
            }
        }
    }
}
