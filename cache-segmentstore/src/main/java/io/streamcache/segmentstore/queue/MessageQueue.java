package io.streamcache.segmentstore.queue;

import io.streamcache.segmentstore.SegmentExistsException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.internal.StoreInternals;
import io.streamcache.segmentstore.internal.log.recovery.LocationIndex;

import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One queue of a {@link MessageQueueStore}: its segment's name and its message index, the end
 * offset of every published message.
 *
 * <pre>
 *  first: long (a field)          | 812 |                                         message 0             (k = 0)
 *  ends:  long[2]                 | 1 930 | 19 311 |                              messages 1, 2          (k = 1)
 *  chunks: long[][] (directory)   [0] -&gt; | 4 longs |                            messages 3 .. 6        (k = 2)
 *                                 [1] -&gt; | 8 longs |                            messages 7 .. 14       (k = 3)
 *                                 ...                                            ... doubling to
 *                                 [7] -&gt; | 512 longs |                          messages 511 .. 1022   (k = 9)
 *                                 [8] -&gt; | 512 longs |                          messages 1023 .. 1534  (k = 10)
 *                                 ...    (512 longs each from then on)
 *  message i: j = i + 1; k = floor(log2 j) and slot j - 2^k while j &lt; 1024,
 *             else k = 8 + j / 512 and slot j mod 512
 *  count (volatile): messages published        msg 0 is [0, 812), msg i is [end(i-1), end(i))
 *  the published byte end is end(count - 1) (0 before the first message)
 * </pre>
 *
 * <p><b>Growth:</b> the end of message 0 is a field of the queue (most queues of a workload with
 * many queues hold one or two messages: no array for the first); the ends of the others go to
 * chunks that are never copied: {@code ends} (2 slots) for messages 1 and 2, then chunks of 4,
 * 8 .. {@link #CHUNK} slots, then of {@link #CHUNK} slots each. An index grows by a new chunk
 * and leaves no garbage but the chunk directory, copied when it doubles (4 bytes a chunk). A
 * queue's messages are never dropped (the facade has no delete or truncate), so chunks are never
 * freed and need no pool.
 *
 * <p><b>Threading:</b> thread-safe. Publication is serialized by the instance's monitor:
 * {@link #publish} is called by each appending thread once its append completed, and waits on
 * the monitor until every message before its own is published (their appends completed before
 * it, since a segment's appends complete in offset order, so their threads are on their way).
 * Readers use the volatile {@link #count} (read first), then {@link #first} (written once,
 * before the count that publishes it), {@link #ends} and {@link #chunks} (volatile, replaced
 * under the monitor before a count that needs them is published) without the monitor, through
 * {@link #end(long, long[], long[][], int)}.
 *
 * <p><b>Heap:</b> 48 bytes, the end of message 0 included, plus the chunks of the others (16 +
 * 8 per slot: at most twice the live ends below {@code 2 CHUNK} messages, one chunk of slack
 * past them) and, from message 3 on, the directory (16 + 4 per chunk, 4 chunks at first); the
 * segment name is the store's own string.
 */
final class MessageQueue {
    private static final long[] NO_ENDS = new long[0];
    /** Ends per chunk (4 KB) from message {@code 2 CHUNK - 1} on; the chunks before double up to it. A power of two. */
    static final int CHUNK = 512;
    private static final int CHUNK_SHIFT = Integer.numberOfTrailingZeros(CHUNK);
    /** The chunk directory's first length. */
    private static final int FIRST_DIRECTORY = 4;

    final String segment;
    /** Published messages; written under the monitor after their ends (release). */
    volatile long count;
    /** End offset of message 0; written under the monitor before the count that publishes it, then never changed. */
    long first;
    /** End offsets of messages 1 and 2 (chunk k = 1); made under the monitor before a count that needs it is published. */
    volatile long[] ends = NO_ENDS;
    /** Chunks k = 2, 3 .. at k - 2 (see the class comment); null before message 3; like {@link #ends}. */
    volatile long[][] chunks;
    /** Threads in {@link #publish} waiting for an earlier message; under the monitor. */
    private int waiting;
    private volatile boolean created;
    /** Its creation failed and it left the table; under the monitor. */
    private boolean discarded;

    MessageQueue(final String segment) {
        this.segment = segment;
    }

    /** @return the queue of an existing segment, its index rebuilt from the segment's log locations. */
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
     * @return the message's index in the queue.
     */
    synchronized long publish(final long offset, final int length) {
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
        grow(published + 1);
        put((int) published, offset + length);
        count = published + 1;
        if (waiting > 0) {
            notifyAll();
        }
        return published;
    }

    /**
     * @return the end offset of message {@code i}, from the index as a reader read it (count
     *         first, then {@code first}, {@code ends} and {@code chunks}): {@code i} below that count.
     */
    static long end(final long first, final long[] ends, final long[][] chunks, final int i) {
        if (i == 0) {
            return first;
        }
        final int k = chunk(i);
        return k == 1 ? ends[slot(i, k)] : chunks[k - 2][slot(i, k)];
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
        return published == 0 ? 0 : end(first, ends, chunks, (int) (published - 1));
    }

    /** Under the monitor, after {@link #grow}: sets the end of message {@code i}. */
    private void put(final int i, final long value) {
        if (i == 0) {
            first = value;
            return;
        }
        final int k = chunk(i);
        if (k == 1) {
            ends[slot(i, k)] = value;
        } else {
            chunks[k - 2][slot(i, k)] = value;
        }
    }

    /** Under the monitor: room for {@code capacity} ends (messages come one by one: the last one's chunk is made if missing). */
    private void grow(final long capacity) {
        if (capacity > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("segment=" + segment + " holds the most messages a queue may: " + count);
        }
        final int i = (int) capacity - 1;
        if (i == 0) {
            return;
        }
        final int k = chunk(i);
        if (k == 1) {
            if (ends == NO_ENDS) {
                ends = new long[chunkLength(1)];
            }
            return;
        }
        long[][] directory = chunks;
        if (directory == null || k - 2 >= directory.length) {
            directory = directory == null
                ? new long[FIRST_DIRECTORY][]
                : Arrays.copyOf(directory, Math.max(k - 1, 2 * directory.length));
        } else if (directory[k - 2] != null) {
            return;
        }
        directory[k - 2] = new long[chunkLength(k)];
        chunks = directory;
    }
}
