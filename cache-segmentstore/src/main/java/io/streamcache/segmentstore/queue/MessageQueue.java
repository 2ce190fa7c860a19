package io.streamcache.segmentstore.queue;

import io.streamcache.segmentstore.SegmentExistsException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.internal.location.LocationIndex;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * One queue of a {@link MessageQueueStore}: its segment's name and its message index, the end
 * offset of every published message.
 *
 * <pre>
 *  first: long (a field)          | 812 |                                         message 0             (k = 0)
 *  directory: address of an off-heap long[capacity] of chunk addresses (all in {@link MessageIndexMemory})
 *                                 [0] -&gt; | 2 longs |                            messages 1, 2          (k = 1)
 *                                 [1] -&gt; | 4 longs |                            messages 3 .. 6        (k = 2)
 *                                 [2] -&gt; | 8 longs |                            messages 7 .. 14       (k = 3)
 *                                 ...                                            ... doubling to
 *                                 [8] -&gt; | 512 longs |                          messages 511 .. 1022   (k = 9)
 *                                 [9] -&gt; | 512 longs |                          messages 1023 .. 1534  (k = 10)
 *                                 ...    (512 longs each from then on)
 *  message i: j = i + 1; k = floor(log2 j) and slot j - 2^k while j &lt; 1024,
 *             else k = 8 + j / 512 and slot j mod 512; its end is at directory[k - 1] + 8 slot
 *  directory capacity: 2 for chunks 1-2, then the power of two at or above the highest chunk;
 *  a full directory is copied to one twice as long (the old one is left unused)
 *  count (volatile): messages published        msg 0 is [0, 812), msg i is [end(i-1), end(i))
 *  the published byte end is end(count - 1) (0 before the first message)
 * </pre>
 *
 * <p><b>Growth:</b> the end of message 0 is a field of the queue (most queues of a workload with
 * many queues hold one or two messages: no chunk for the first); the ends of the others go to
 * chunks that are never copied: 2 slots for messages 1 and 2, then 4, 8 .. {@link #CHUNK} slots,
 * then {@link #CHUNK} slots each. The chunks and the directory of their addresses are direct
 * memory taken from the store's {@link MessageIndexMemory} (an index on the heap
 * allocated 8 bytes a message for as long as the queue grew, and its directory's doublings, 4 B a
 * message on queues of a few tens of messages); the queue holds the directory's address. A
 * queue's messages are never dropped (the facade has no delete or truncate), so chunks are never
 * freed; a directory outgrown by doubling is left unused in the memory (at most as much as the
 * live one, which holds 8 bytes per chunk).
 *
 * <p><b>Threading:</b> thread-safe. Publication is serialized by the instance's monitor:
 * {@link #publish} is called by each appending thread once its append completed, and waits on
 * the monitor until every message before its own is published (their appends completed before
 * it, since a segment's appends complete in offset order, so their threads are on their way).
 * Readers use the volatile {@link #count} (read first), then {@link #first} (written once,
 * before the count that publishes it) and {@link #directory} (volatile, replaced under the
 * monitor before a count that needs it is published; chunk addresses and ends are written with
 * plain stores before the count that publishes them, and memory once written is never reused)
 * without the monitor, through {@link #end(long, long, int)}.
 *
 * <p><b>Heap:</b> 48 bytes, the end of message 0 included, whatever the messages. Off the heap,
 * from message 1 on: 8 bytes per slot of the chunks (at most twice the live ends below
 * {@code 2 CHUNK} messages, one chunk of slack past them) and of the directories. The segment
 * name is the store's own string.
 */
final class MessageQueue {
    /** Ends per chunk (4 KB) from message {@code 2 CHUNK - 1} on; the chunks before double up to it. A power of two. */
    static final int CHUNK = 512;
    private static final int CHUNK_SHIFT = Integer.numberOfTrailingZeros(CHUNK);
    /** The chunk directory's first capacity. */
    private static final int FIRST_DIRECTORY = 2;

    final String segment;
    /** Published messages; written under the monitor after their ends (release). */
    volatile long count;
    /** End offset of message 0; written under the monitor before the count that publishes it, then never changed. */
    long first;
    /**
     * Address of the directory: the addresses of chunks k = 1, 2 .. at {@code 8 (k - 1)} (0: not
     * made); 0 before message 1; made or replaced (grown) under the monitor before a count that
     * needs it is published.
     */
    volatile long directory;
    /** Threads in {@link #publish} waiting for an earlier message; under the monitor. */
    private int waiting;
    private volatile boolean created;
    /** Its creation failed and it left the table; under the monitor. */
    private boolean discarded;

    MessageQueue(final String segment) {
        this.segment = segment;
    }

    /** @return the queue of an existing segment, its index rebuilt from the segment's log locations. */
    static MessageQueue rebuild(final SegmentStore store, final String segment, final MessageIndexMemory memory) {
        final LocationIndex locations = store.locations(segment);
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
                queue.grow(count[0] + 1, memory);
                queue.put((int) count[0], offset + recordLength);
                count[0]++;
            });
            queue.count = count[0];
            queue.created = true;
        }
        return queue;
    }

    /**
     * Creates the queue's segment once.
     *
     * @return false if this queue was discarded (its creation failed on another thread):
     *         the caller takes the queue now in the table instead.
     * @throws RuntimeException what the creation threw; the queue is then out of the table.
     */
    boolean ensureCreated(final SegmentStore store, final QueueTable table) {
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
                    discard(table);
                    throw e;
                }
                final Throwable failedAtOnce = creation.isCompletedExceptionally() ? cause(creation) : null;
                if (failedAtOnce != null && !(failedAtOnce instanceof SegmentExistsException)) {
                    discard(table);
                    throw failedAtOnce instanceof RuntimeException r ? r : new CompletionException(failedAtOnce);
                }
                // SegmentExistsException: created by another facade over the same store; take it as it is.
                if (failedAtOnce == null) {
                    creation.whenComplete((ignored, failure) -> {
                        if (failure != null) {
                            synchronized (this) {
                                discard(table);
                            }
                        }
                    });
                }
                created = true;
            }
            return true;
        }
    }

    /** Takes the queue out of the table after its creation failed; under the monitor. */
    private void discard(final QueueTable table) {
        discarded = true;
        created = false;
        table.remove(this);
    }

    private static Throwable cause(final CompletableFuture<?> failed) {
        try {
            failed.join();
            return null;
        } catch (final CompletionException e) {
            return e.getCause() != null ? e.getCause() : e;
        } catch (final CancellationException e) {
            return e;
        }
    }

    /**
     * Publishes the message whose append completed at {@code offset}: waits until every message
     * before it is published (their threads publish them), then counts it.
     *
     * @param memory where the index's chunks come from (the store's).
     * @return the message's index in the queue.
     */
    synchronized long publish(final long offset, final int length, final MessageIndexMemory memory) {
        if (offset != end()) {
            boolean interrupted = false;
            waiting++;
            try {
                long end;
                while (offset != (end = end())) {
                    if (offset < end) {
                        throw new IllegalStateException("segment=" + segment + ": a message completed at offset=" + offset
                            + " below the published end=" + end + " (did something else append to the segment?)");
                    }
                    try {
                        wait();
                    } catch (final InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                waiting--;
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        final long published = count;
        grow(published + 1, memory);
        put((int) published, offset + length);
        count = published + 1;
        if (waiting > 0) {
            notifyAll();
        }
        return published;
    }

    /**
     * @return the end offset of message {@code i}, from the index as a reader read it (count
     *         first, then {@code first} and {@code directory}): {@code i} below that count.
     */
    static long end(final long first, final long directory, final int i) {
        if (i == 0) {
            return first;
        }
        final int k = chunk(i);
        return UNSAFE.getLong(chunkAddress(directory, k) + (long) slot(i, k) * Long.BYTES);
    }

    /** @return the address of chunk {@code k >= 1} in {@code directory} (0 if not made). */
    static long chunkAddress(final long directory, final int k) {
        return UNSAFE.getLong(directory + (long) (k - 1) * Long.BYTES);
    }

    /** @return the capacity of the directory that holds chunks 1 .. {@code k}: 2, then the power of two at or above k. */
    static int directoryCapacity(final int k) {
        return k <= FIRST_DIRECTORY ? FIRST_DIRECTORY : Integer.highestOneBit(k - 1) << 1;
    }

    /** @return the chunk of message {@code i >= 1}: 1 for messages 1 and 2, see the class comment. */
    static int chunk(final int i) {
        final int j = i + 1;
        return j < 2 * CHUNK ? 31 - Integer.numberOfLeadingZeros(j) : CHUNK_SHIFT - 1 + (j >>> CHUNK_SHIFT);
    }

    private static int slot(final int i, final int k) {
        final int j = i + 1;
        return j < 2 * CHUNK ? j - (1 << k) : j & (CHUNK - 1);
    }

    /** @return the slots of chunk {@code k >= 1}. */
    static int chunkLength(final int k) {
        return k <= CHUNK_SHIFT ? 1 << k : CHUNK;
    }

    /** Under the monitor: the byte end of the published messages. */
    private long end() {
        final long published = count;
        return published == 0 ? 0 : end(first, directory, (int) (published - 1));
    }

    /** Under the monitor, after {@link #grow}: sets the end of message {@code i} (plain: the count that follows publishes it). */
    private void put(final int i, final long value) {
        if (i == 0) {
            first = value;
            return;
        }
        final int k = chunk(i);
        UNSAFE.putLong(chunkAddress(directory, k) + (long) slot(i, k) * Long.BYTES, value);
    }

    /** Under the monitor: room for {@code capacity} ends (messages come one by one: the last one's chunk is made if missing). */
    private void grow(final long capacity, final MessageIndexMemory memory) {
        if (capacity > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("segment=" + segment + " holds the most messages a queue may: " + count);
        }
        final int i = (int) capacity - 1;
        if (i == 0) {
            return;
        }
        final int k = chunk(i);
        if (slot(i, k) != 0) {
            // Not the chunk's first message: the chunk was made with the message before.
            return;
        }
        // Taken before anything changes: a failure to get memory leaves the index as it was.
        final long chunk = memory.take(chunkLength(k) * Long.BYTES);
        // Chunks 1 .. k - 1 are made: the directory's capacity is that of k - 1.
        final long current = directory;
        if (current != 0 && k <= directoryCapacity(k - 1)) {
            // Plain: the count that needs the chunk publishes it.
            UNSAFE.putLong(current + (long) (k - 1) * Long.BYTES, chunk);
            return;
        }
        final long grown = memory.take(directoryCapacity(k) * Long.BYTES);
        if (current != 0) {
            UNSAFE.copyMemory(current, grown, (long) (k - 1) * Long.BYTES);
        }
        UNSAFE.putLong(grown + (long) (k - 1) * Long.BYTES, chunk);
        // The old directory stays valid for readers that hold it: its memory is never reused.
        directory = grown;
    }
}
