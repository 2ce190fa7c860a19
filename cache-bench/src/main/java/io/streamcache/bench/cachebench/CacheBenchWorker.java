package io.streamcache.bench.cachebench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import org.HdrHistogram.Histogram;

import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;

/**
 * One thread's share of a {@link CacheBench} run, confined to that thread while it runs; read
 * by the coordinating thread only after {@link Thread#join()} (the happens-before edge).
 *
 * <p>Thread {@code t} of {@code T} owns the keys {@code k} with {@code k % T == t}, held in
 * {@code addresses[k / T]}. No other thread touches those entries, which is how the cache's
 * contract (operations on one entry serialized by the caller) holds without locks.
 *
 * <p>The measured loop allocates nothing: per-op counters are {@code long}s, latencies go into
 * pre-sized per-op {@link Histogram}s, and data moves between two thread-local direct buffers
 * and the cache.
 */
final class CacheBenchWorker implements Runnable {
    static final int LOOKUP = 0;
    static final int INSERT = 1;
    static final int APPEND = 2;
    static final int DELETE = 3;
    static final int OP_COUNT = 4;
    static final String[] OP_NAMES = {"lookup", "insert", "append", "delete"};
    /** Latencies above this are recorded as this (60 s, in ns). */
    static final long HIGHEST_LATENCY_NS = 60_000_000_000L;
    static final int SIGNIFICANT_DIGITS = 3;

    private static final int ABSENT = BlockAddressDescriptor.NULL_ADDRESS;

    private final BlockCache cache;
    private final int lookupBound;
    private final int insertBound;
    private final int appendBound;
    private final int entrySizeMin;
    private final int entrySizeSpan;
    private final int rollLength;
    private final boolean readEachOp;
    private final long opsLimit;
    private final CountDownLatch start;
    private final CacheBench.StopFlag stop;
    private final SplittableRandom random;
    private final ByteBuf source;
    private final ByteBuf destination;

    final int[] addresses;
    final Histogram[] histograms = new Histogram[OP_COUNT];
    final long[] counts = new long[OP_COUNT];
    long hits;
    long misses;
    long full;
    long rolls;
    long startNanos;
    long endNanos;
    /** Heap bytes this thread allocated in the measured loop, or -1 when the JVM cannot tell. */
    long allocatedBytes = -1;
    Throwable failure;

    CacheBenchWorker(final BlockCache cache, final CacheBenchConfig config, final int index, final long opsLimit,
        final CountDownLatch start, final CacheBench.StopFlag stop) {
        this.cache = cache;
        this.lookupBound = config.lookupPercent;
        this.insertBound = lookupBound + config.insertPercent;
        this.appendBound = insertBound + config.appendPercent;
        this.entrySizeMin = config.entrySizeMin;
        this.entrySizeSpan = config.entrySizeMax - config.entrySizeMin + 1;
        this.rollLength = config.rollLength();
        this.readEachOp = config.readEachOp;
        this.opsLimit = opsLimit;
        this.start = start;
        this.stop = stop;
        this.random = new SplittableRandom(config.seed * 0x9E37_79B9_7F4A_7C15L + index);
        this.addresses = new int[(config.keyRange - index + config.threads - 1) / config.threads];
        for (int op = 0; op < OP_COUNT; op++) {
            histograms[op] = new Histogram(HIGHEST_LATENCY_NS, SIGNIFICANT_DIGITS);
        }
        this.source = Unpooled.directBuffer(config.entrySizeMax, config.entrySizeMax);
        final byte[] bytes = new byte[config.entrySizeMax];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) random.nextInt(256);
        }
        source.writeBytes(bytes);
        this.destination = Unpooled.directBuffer(rollLength, rollLength);
    }

    @Override
    public void run() {
        try {
            start.await();
            final long allocatedBefore = allocatedBytes();
            startNanos = System.nanoTime();
            final long limit = opsLimit > 0 ? opsLimit : Long.MAX_VALUE;
            for (long i = 0; i < limit && !stop.stopped(); i++) {
                final int slot = random.nextInt(addresses.length);
                final int choice = random.nextInt(100);
                if (choice < lookupBound) {
                    timedLookup(slot);
                } else if (choice < insertBound) {
                    final long t0 = System.nanoTime();
                    insert(slot, nextSize());
                    record(INSERT, t0);
                } else if (choice < appendBound) {
                    final long t0 = System.nanoTime();
                    append(slot, nextSize());
                    record(APPEND, t0);
                } else {
                    final long t0 = System.nanoTime();
                    delete(slot);
                    record(DELETE, t0);
                }
                if (readEachOp) {
                    timedLookup(random.nextInt(addresses.length));
                }
            }
            endNanos = System.nanoTime();
            final long allocatedAfter = allocatedBytes();
            allocatedBytes = allocatedBefore < 0 || allocatedAfter < 0 ? -1 : allocatedAfter - allocatedBefore;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
            endNanos = System.nanoTime();
        } catch (final RuntimeException | Error e) {
            failure = e;
            endNanos = System.nanoTime();
        }
    }

    /** @return the heap bytes the calling thread has allocated so far, or -1 if the JVM cannot tell. */
    static long allocatedBytes() {
        final java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        if (bean instanceof com.sun.management.ThreadMXBean) {
            final com.sun.management.ThreadMXBean sun = (com.sun.management.ThreadMXBean) bean;
            if (sun.isThreadAllocatedMemorySupported() && sun.isThreadAllocatedMemoryEnabled()) {
                return sun.getThreadAllocatedBytes(Thread.currentThread().getId());
            }
        }
        return -1;
    }

    /** Releases the thread-local buffers; call once the thread has ended. */
    void release() {
        source.release();
        destination.release();
    }

    private int nextSize() {
        return entrySizeSpan == 1 ? entrySizeMin : entrySizeMin + random.nextInt(entrySizeSpan);
    }

    private void record(final int op, final long t0) {
        final long ns = System.nanoTime() - t0;
        histograms[op].recordValue(Math.min(ns, HIGHEST_LATENCY_NS));
        counts[op]++;
    }

    private void timedLookup(final int slot) {
        final long t0 = System.nanoTime();
        lookup(slot);
        record(LOOKUP, t0);
    }

    /** Copies the whole entry of the key into the thread-local buffer; a miss when absent. */
    private void lookup(final int slot) {
        final int address = addresses[slot];
        if (address == ABSENT) {
            misses++;
            return;
        }
        final int length = cache.length(address);
        cache.copyTo(address, 0, destination, 0, length);
        hits++;
    }

    /** Replaces the key's entry: delete (if present), then insert. A full cache leaves the key absent. */
    private void insert(final int slot, final int size) {
        final int address = addresses[slot];
        if (address != ABSENT) {
            cache.delete(address);
            addresses[slot] = ABSENT;
        }
        source.setIndex(0, size);
        try {
            addresses[slot] = cache.insert(source);
        } catch (final CacheFullException e) {
            full++;
        }
    }

    /** Appends to the key's entry; inserts when absent, rolls (replaces) an entry that would grow too long. */
    private void append(final int slot, final int size) {
        final int address = addresses[slot];
        if (address == ABSENT) {
            insert(slot, size);
            return;
        }
        if (cache.length(address) + size > rollLength) {
            rolls++;
            insert(slot, size);
            return;
        }
        source.setIndex(0, size);
        try {
            addresses[slot] = cache.append(address, source);
        } catch (final CacheFullException e) {
            full++;
        }
    }

    private void delete(final int slot) {
        final int address = addresses[slot];
        if (address != ABSENT) {
            cache.delete(address);
            addresses[slot] = ABSENT;
        }
    }
}
