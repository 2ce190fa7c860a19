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
 *  ends: long[] (capacity 2, then doubling)    | 812 | 1 930 | 19 311 | ...
 *  count (volatile): messages published        msg 0 is [0, 812), msg i is [ends[i-1], ends[i])
 *  end: byte end of the published messages
 * </pre>
 *
 * <p><b>Threading:</b> thread-safe. Publication is serialized by the instance's monitor:
 * {@link #publish} is called by each appending thread once its append completed, and waits on
 * the monitor until every message before its own is published (their appends completed before
 * it, since a segment's appends complete in offset order, so their threads are on their way).
 * Readers use the volatile {@link #count} (read first) and {@link #ends} without the monitor.
 *
 * <p><b>Heap:</b> 48 bytes plus the index (16 + 8 per slot); the segment name is the
 * store's own string.
 */
final class MessageQueue {
    private static final long[] NO_ENDS = new long[0];
    private static final int FIRST_CAPACITY = 2;

    final String segment;
    /** Published messages; written under the monitor after their ends (release). */
    volatile long count;
    /** End offsets; replaced (grown) under the monitor before a count that needs it is published. */
    volatile long[] ends = NO_ENDS;
    /** Byte end of the published messages; under the monitor. */
    private long end;
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
        if (offset != end) {
            boolean interrupted = false;
            waiting++;
            try {
                while (offset != end) {
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
        end += length;
        ends[(int) published] = end;
        count = published + 1;
        if (waiting > 0) {
            notifyAll();
        }
        return published;
    }

    /** Under the monitor. */
    private void grow(final long capacity) {
        if (capacity > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("segment=" + segment + " holds the most messages a queue may: " + count);
        }
        final long[] current = ends;
        if (capacity > current.length) {
            final long grown = Math.max(FIRST_CAPACITY, Math.max(capacity, 2L * current.length));
            ends = Arrays.copyOf(current, (int) Math.min(Integer.MAX_VALUE - 8, grown));
        }
    }
}
