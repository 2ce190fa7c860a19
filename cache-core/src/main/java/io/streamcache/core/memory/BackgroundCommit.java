package io.streamcache.core.memory;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.internal.concurrent.Waits;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * Commits the pages of a lazily allocated region on a thread of its own
 * ({@link DirectMemoryRegion.Commit#BACKGROUND}), so that the cache's first write into a page
 * finds it committed instead of taking the page fault on the data path (for a store with a log,
 * on the one completion thread every durable append goes through).
 *
 * <pre>
 *   chunk 0                                chunk 1
 *   [pad|page|page|page| ... |page]        [pad|page|page| ... ]     ranges in buffer order, the
 *        ^ committed so far                                          order a new cache hands its
 *          (touched ascending, one atomic add of 0 per page)         blocks out (ascending)
 * </pre>
 *
 * <p><b>Why an atomic add of zero.</b> The cache may already be writing into the pages ahead of
 * this thread. A page is committed by a write access; {@code getAndAddLong(address, 0)} is one
 * (a locked read-modify-write on x86, a store-exclusive or an atomic on ARM), and whatever
 * another thread wrote to those 8 bytes before or after it, it leaves them unchanged: the add
 * is atomic, so it cannot interleave with a concurrent store, and it adds nothing. No byte of
 * the region is changed by this class.
 *
 * <p><b>Threading:</b> {@link #start} and {@link #stop} are called by the region's owner (open,
 * close). {@link #stop} returns only once the thread touches no page any more, so the region
 * may free its memory after it. {@link #committedBytes} may be read from any thread.
 */
final class BackgroundCommit implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(BackgroundCommit.class);
    /** Pages touched between two looks at {@link #stopping}. */
    private static final int PAGES_PER_CHECK = 64;

    private final String owner;
    /** Pairs of (address, length) to commit, in order; 8-byte-aligned (page-aligned in a region) addresses. */
    private final long[] ranges;
    private final long pageSize;
    private final Thread thread;
    private volatile boolean stopping;
    /** Bytes committed so far (written by the thread only). */
    private volatile long committedBytes;
    private final long totalBytes;

    /**
     * @param threads creates the thread (role {@link StreamcacheThreads.Role#MEMORY_COMMIT}).
     * @param owner   the region's description, in the thread's name and the log.
     * @param ranges  pairs of (address, length): the memory to commit, in the order to commit it.
     */
    BackgroundCommit(final StreamcacheThreads threads, final String owner, final long[] ranges) {
        this.owner = owner;
        this.pageSize = UNSAFE.pageSize();
        this.ranges = ranges.clone();
        long total = 0;
        for (int i = 0; i < ranges.length; i += 2) {
            if ((ranges[i] & 7) != 0 || ranges[i + 1] < 0) {
                throw new IllegalArgumentException("range " + i / 2 + " of " + owner + ": address=" + ranges[i]
                    + " is not 8-byte aligned or length=" + ranges[i + 1] + " is negative");
            }
            total += ranges[i + 1];
        }
        this.totalBytes = total;
        this.thread = threads.newThread(StreamcacheThreads.Role.MEMORY_COMMIT, owner, this);
    }

    void start() {
        thread.start();
    }

    @Override
    public void run() {
        final long startNanos = System.nanoTime();
        long before = 0;
        int sinceCheck = 0;
        outer:
        for (int r = 0; r < ranges.length; r += 2) {
            final long start = ranges[r];
            final long length = ranges[r + 1];
            // One touch per page: from an address inside the first page, every pageSize bytes.
            for (long offset = 0; offset < length; offset += pageSize) {
                if (++sinceCheck == PAGES_PER_CHECK) {
                    sinceCheck = 0;
                    if (stopping) {
                        break outer;
                    }
                    committedBytes = before + offset;
                }
                UNSAFE.getAndAddLong(null, start + offset, 0L);
            }
            before += length;
            committedBytes = before;
        }
        LOG.debug("{}: committed {} of {} bytes in the background in {} ms{}", owner, committedBytes, totalBytes,
            (System.nanoTime() - startNanos) / 1_000_000, stopping ? " (stopped by close)" : "");
    }

    /**
     * Stops the thread and waits for it (uninterruptibly: the memory must not be freed under a
     * touch in progress); the interrupt status is kept.
     */
    void stop() {
        stopping = true;
        Waits.joinUninterruptibly(thread);
    }

    /**
     * @return bytes committed so far: all of the region once {@link #isDone()}.
     */
    long committedBytes() {
        return committedBytes;
    }

    /**
     * @return the bytes this commits in all.
     */
    long totalBytes() {
        return totalBytes;
    }

    /**
     * @return whether the thread ended (every page committed, or stopped).
     */
    boolean isDone() {
        return !thread.isAlive();
    }

    /** For tests: waits until the thread ended. */
    void awaitDone() throws InterruptedException {
        thread.join();
    }
}
