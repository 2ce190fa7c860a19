package io.streamcache.segmentstore;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.WarmCatalog;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexTree;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Writes a store's warm catalog ({@link WarmCatalog}): one record per cached, durable index entry
 * of every live segment (segment id, offset, cache address, length, digest of the bytes), on its
 * own thread: the first one at once (so that the catalog soon carries this store's writer epoch),
 * then early ones at doubling delays from {@link #FIRST_DELAY} up to the checkpoint interval
 * (1 s, 2 s, 4 s, ... after the open: a crash in the first interval after an open under heavy
 * appends still finds a catalog of what was cached a few seconds before it), then one every
 * interval, and once more at the store's clean close, after the writer drained. The early ones
 * cost little: a checkpoint hashes only the entries that changed since the last one.
 *
 * <pre>
 *  for each live segment:            under the segment's lock (appends, eviction and
 *    for each index entry:           relocation of that segment wait; others run)
 *      cached and below durableLength -&gt; (offset, length, address, age = generations since
 *        its last use), digest:
 *        the last checkpoint's if the same (segment, offset, address, length) had one,
 *        else cache.digest(address, length)        (a segment's durable bytes never change,
 *                                                   so the key determines the bytes)
 *  write the records; commit: temp file, force, rename, force the directory
 * </pre>
 * The data path pays nothing: no hashing on the producer's or completer's thread; the digests
 * are taken here, each entry once while it stays as it is.
 *
 * <p><b>Threading:</b> {@link #checkpoint} is serialized (its own lock); the thread is started by
 * {@link #start} and stopped (interrupted and joined) by {@link #close}.
 */
final class WarmCheckpointer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WarmCheckpointer.class);

    /** The delay between the first checkpoint and the second; each next delay doubles, up to the interval. */
    static final Duration FIRST_DELAY = Duration.ofSeconds(1);

    /** What identifies an entry's bytes: its segment, offset, address and length. */
    record Key(long segment, long offset, int address, int length) {
    }

    private final String store;
    private final BlockCache cache;
    private final SegmentTable table;
    private final CacheManager manager;
    private final long identity;
    private final long intervalNanos;
    private final Thread thread;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition stop = lock.newCondition();
    private boolean stopping;
    private long sequence;
    private Map<Key, Long> digests;
    /** Scratch per segment, reused. */
    private long[] offsets = new long[64];
    private int[] lengths = new int[64];
    private int[] addresses = new int[64];
    private int[] ages = new int[64];
    private volatile long checkpoints;
    private volatile long lastRecords;
    private volatile long lastHashed;

    WarmCheckpointer(final String store, final BlockCache cache, final SegmentTable table, final CacheManager manager,
                     final long identity,
                     final long firstSequence, final Duration interval, final Map<Key, Long> digests,
                     final StreamcacheThreads threads) {
        this.store = store;
        this.cache = cache;
        this.table = table;
        this.manager = manager;
        this.identity = identity;
        this.sequence = firstSequence;
        this.intervalNanos = interval.toNanos();
        this.digests = new HashMap<>(digests);
        this.thread = threads.newThread(StreamcacheThreads.Role.WARM_CHECKPOINT, store, this::run);
    }

    void start() {
        thread.start();
    }

    private void run() {
        long next = System.nanoTime();
        // The delay after the next checkpoint: doubles from FIRST_DELAY until it reaches the interval.
        long delay = Math.min(FIRST_DELAY.toNanos(), intervalNanos);
        while (true) {
            lock.lock();
            try {
                long wait = next - System.nanoTime();
                while (!stopping && wait > 0) {
                    wait = stop.awaitNanos(wait);
                }
                if (stopping) {
                    return;
                }
            } catch (final InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            try {
                checkpoint(false);
            } catch (final IOException | RuntimeException e) {
                LOG.warn("store {}: warm checkpoint failed (the previous catalog stays): {}", store, e.toString());
            }
            next = System.nanoTime() + delay;
            delay = Math.min(intervalNanos, delay * 2);
        }
    }

    /**
     * Writes the catalog now.
     *
     * @param clean whether this is the store's clean close (nothing changes after it).
     * @return records written.
     */
    long checkpoint(final boolean clean) throws IOException {
        lock.lock();
        try {
            final long started = System.nanoTime();
            final Map<Key, Long> next = new HashMap<>(Math.max(16, digests.size() * 4 / 3));
            long hashed = 0;
            try (WarmCatalog.Writer writer = new WarmCatalog.Writer(cache, identity, ++sequence)) {
                for (final Segment segment : table.segments.values()) {
                    final long[] digestsOut;
                    int count = 0;
                    final int current = manager.generation();
                    segment.lock();
                    try {
                        if (segment.deleted) {
                            continue;
                        }
                        for (ReadIndexEntry entry = ReadIndexTree.first(segment.indexRoot); entry != null;
                             entry = ReadIndexTree.next(segment.indexRoot, entry)) {
                            if (entry.isCached() && entry.endOffset() <= segment.durableLength) {
                                if (count == offsets.length) {
                                    grow();
                                }
                                offsets[count] = entry.offset();
                                lengths[count] = entry.length();
                                addresses[count] = entry.address();
                                // Generations before now: how far back its last use was.
                                ages[count] = Math.max(0, current - entry.generation());
                                count++;
                            }
                        }
                        digestsOut = new long[count];
                        for (int i = 0; i < count; i++) {
                            final Key key = new Key(segment.id, offsets[i], addresses[i], lengths[i]);
                            final Long known = digests.get(key);
                            long digest;
                            if (known != null) {
                                digest = known;
                            } else {
                                try {
                                    digest = cache.digest(addresses[i], lengths[i]);
                                } catch (final IndexOutOfBoundsException e) {
                                    // The cache entry grew past the index in more blocks (a failed append): left out.
                                    lengths[i] = -1;
                                    continue;
                                }
                                hashed++;
                            }
                            digestsOut[i] = digest;
                            next.put(key, digest);
                        }
                    } finally {
                        segment.unlock();
                    }
                    for (int i = 0; i < count; i++) {
                        if (lengths[i] >= 0) {
                            writer.add(segment.id, offsets[i], addresses[i], lengths[i], digestsOut[i], ages[i]);
                        }
                    }
                }
                writer.commit(clean);
                digests = next;
                checkpoints++;
                lastRecords = writer.count();
                lastHashed = hashed;
                LOG.debug("store {}: warm checkpoint {} ({}): {} entries, {} hashed, {} ms", store, sequence,
                    clean ? "clean" : "running", writer.count(), hashed, (System.nanoTime() - started) / 1_000_000);
                return writer.count();
            }
        } finally {
            lock.unlock();
        }
    }

    private void grow() {
        offsets = Arrays.copyOf(offsets, offsets.length * 2);
        lengths = Arrays.copyOf(lengths, lengths.length * 2);
        addresses = Arrays.copyOf(addresses, addresses.length * 2);
        ages = Arrays.copyOf(ages, ages.length * 2);
    }

    /** @return checkpoints written. */
    long checkpoints() {
        return checkpoints;
    }

    /** @return entries the last checkpoint digested (the others' digests were known). */
    long lastHashed() {
        return lastHashed;
    }

    /** @return records of the last checkpoint. */
    long lastRecords() {
        return lastRecords;
    }

    /** Stops the thread and waits for a checkpoint in progress. */
    @Override
    public void close() {
        lock.lock();
        try {
            stopping = true;
            stop.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
