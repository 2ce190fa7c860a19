package io.streamcache.bench.sim;

import io.streamcache.segmentstore.eviction.EvictionPolicy;
import io.streamcache.segmentstore.eviction.HitmapPolicy;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.eviction.GenerationLists;
import io.streamcache.segmentstore.internal.eviction.OneTierPass;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * A real {@link EvictionPolicy} driven as the {@code CacheManager} drives it, over one
 * {@link ReadIndexEntry} per cached block. Confined to the simulating thread.
 *
 * <p>Mirrors the manager: the data path calls {@link EvictionPolicy#recordUse} on every append,
 * hit and read-in, with the current generation. Time is counted in accesses: every
 * {@code generationPeriod} accesses the generation advances and, above the target utilization,
 * a pass evicts down to it (the manager's timer); an insert into a full cache advances the
 * generation and runs a pass that frees at least one block (the manager's full handler). A pass
 * is the cache manager's own code, {@link OneTierPass}, over this cache as its one
 * {@link EvictionSource}: under the generation policy it first walks only the segments holding
 * the oldest entries, listed by the store's {@link GenerationLists}; otherwise (and for what that
 * step leaves) {@code beginPass}, a survey of every cached entry segment by segment in offset
 * order, then {@code advance}/{@code select} steps until enough blocks are freed. The Hitmap's updater is simulated by a {@code drain()} every
 * {@value #HITMAP_BATCH} accesses (a 4 KB page of hashes), so the run is deterministic.
 * Readers of the reader-aware policy are registered, moved after each read and closed as the
 * trace says; or, inferring readers, none is registered and every read is reported to the policy
 * ({@code observeRead}), as a {@code SegmentStore} does. The policy's clock counts accesses.
 * A read miss of the reader-aware policy, with the cache at or over its target, is cached only if
 * the policy's fill admission keeps it ({@code ReaderAwarePolicy.admit}, asked after the read is
 * reported, as the store asks when it fills what it read back from the log); a refused block is
 * served and not cached.
 */
final class PolicyCache implements SimCache {
    /** Accesses between two drains of the Hitmap's queue. */
    static final int HITMAP_BATCH = 512;

    private final EvictionPolicy policy;
    private final ReaderAwarePolicy readerAware;
    private final HitmapPolicy hitmap;
    private final long capacity;
    private final double targetUtilization;
    private final long generationPeriod;
    private final Seg[] segs;
    private final List<Seg> live = new ArrayList<>();
    /** The cache's segments with cached blocks by the generation of their oldest (the store's listing). */
    private final GenerationLists<Seg> byGeneration = new GenerationLists<>(new SegMembers());
    private final List<EvictionSource> sources = List.of(new Source());
    private final OneTierPass onePass;
    private final ReaderAwarePolicy.Reader[] readers;
    private final Clock clock;
    private final boolean inferReaders;
    private int generation;
    private long accesses;
    private long used;
    private long failed;
    private long passes;
    /** Reads served and not cached: the reader-aware policy's admission refused them. */
    private long refused;

    /**
     * @param generationPeriod accesses between two generations, &gt;= 1.
     */
    PolicyCache(final Trace trace, final EvictionPolicy policy, final long capacity, final double targetUtilization,
                final long generationPeriod) {
        this(trace, policy, capacity, targetUtilization, generationPeriod, new Clock(), false);
    }

    /**
     * @param clock        advanced by one at every access (the reader-aware policy's clock).
     * @param inferReaders reader-aware only: report every read instead of registering readers.
     */
    PolicyCache(final Trace trace, final EvictionPolicy policy, final long capacity, final double targetUtilization,
                final long generationPeriod, final Clock clock, final boolean inferReaders) {
        this.clock = clock;
        this.inferReaders = inferReaders;
        this.policy = policy;
        this.readerAware = policy instanceof ReaderAwarePolicy ? (ReaderAwarePolicy) policy : null;
        this.hitmap = policy instanceof HitmapPolicy ? (HitmapPolicy) policy : null;
        this.capacity = capacity;
        this.targetUtilization = targetUtilization;
        this.generationPeriod = generationPeriod;
        this.segs = new Seg[trace.segmentCount()];
        this.readers = new ReaderAwarePolicy.Reader[trace.readerCount()];
        this.onePass = new OneTierPass(policy, Trace.BLOCK_SIZE);
    }

    @Override
    public void create(final Trace trace, final int i) {
        final Seg seg = new Seg("segment-" + trace.segment(i));
        segs[trace.segment(i)] = seg;
        live.add(seg);
    }

    @Override
    public boolean access(final Trace trace, final int i) {
        accesses++;
        clock.now++;
        if (accesses % generationPeriod == 0) {
            generation++;
            pass(targetUtilization, 0);
        }
        if (hitmap != null && accesses % HITMAP_BATCH == 0) {
            hitmap.drain();
        }
        final Seg seg = segs[trace.segment(i)];
        final int block = trace.block(i);
        final boolean hit = seg.cached.get(block);
        // The store reports a read (and a reader moves) once it is served, before what it read
        // back from the log is admitted: the reader is then past the block.
        final boolean read = trace.type(i) == Trace.READ;
        if (readerAware != null && inferReaders) {
            if (read) {
                readerAware.observeRead(seg.name, (long) block * Trace.BLOCK_SIZE, (long) (block + 1) * Trace.BLOCK_SIZE);
            }
        } else if (readerAware != null && read && trace.reader(i) >= 0) {
            final ReaderAwarePolicy.Reader reader = readers[trace.reader(i)];
            if (reader != null) {
                reader.position((long) (block + 1) * Trace.BLOCK_SIZE);
            }
        }
        if (hit) {
            policy.recordUse(seg.name, seg.entries[block], generation);
        } else if (read && readerAware != null && used >= (long) Math.floor(targetUtilization * capacity)
            && !readerAware.admit(seg.name, (long) block * Trace.BLOCK_SIZE, (long) (block + 1) * Trace.BLOCK_SIZE)) {
            refused++;
        } else {
            if (used >= capacity) {
                generation++;
                pass(targetUtilization, 1);
            }
            if (used >= capacity) {
                failed++;
            } else {
                final ReadIndexEntry entry = new ReadIndexEntry((long) block * Trace.BLOCK_SIZE, Trace.BLOCK_SIZE, 1, generation);
                seg.put(block, entry);
                used++;
                if (!seg.listed) {
                    seg.listed = true;
                    seg.listedGeneration = generation;
                    byGeneration.push(seg);
                }
                policy.recordUse(seg.name, entry, generation);
            }
        }
        return hit;
    }

    @Override
    public void reader(final Trace trace, final int i) {
        if (readerAware == null || inferReaders) {
            return;
        }
        final int r = trace.reader(i);
        if (trace.type(i) == Trace.OPEN_READER) {
            readers[r] = readerAware.register(segs[trace.segment(i)].name, (long) trace.block(i) * Trace.BLOCK_SIZE);
        } else if (readers[r] != null) {
            readers[r].close();
            readers[r] = null;
        }
    }

    @Override
    public void delete(final Trace trace, final int i) {
        final Seg seg = segs[trace.segment(i)];
        for (int b = seg.cached.nextSetBit(0); b >= 0; b = seg.cached.nextSetBit(b + 1)) {
            seg.entries[b].address(ReadIndexEntry.NULL_ADDRESS);
            used--;
        }
        seg.cached.clear();
        seg.entries = new ReadIndexEntry[0];
        live.remove(seg);
        segs[trace.segment(i)] = null;
        if (readerAware != null) {
            readerAware.forget(seg.name);
        }
    }

    @Override
    public long used() {
        return used;
    }

    @Override
    public long failedInserts() {
        return failed;
    }

    /** @return reads the reader-aware policy's admission served without caching. */
    long refusedFills() {
        return refused;
    }

    long passes() {
        return passes;
    }

    /** {@code CacheManager.pass}: frees blocks down to the target, at least {@code minimumBlocks}. */
    private void pass(final double utilization, final long minimumBlocks) {
        final long targetBlocks = (long) Math.floor(utilization * capacity);
        final long wanted = Math.max(used - targetBlocks, minimumBlocks);
        if (wanted <= 0) {
            return;
        }
        passes++;
        onePass.run(sources, generation, wanted);
    }

    /** Evicts a cached block (the source's eviction: the entry's address set to none). */
    private void evict(final Seg seg, final int block) {
        seg.entries[block].address(ReadIndexEntry.NULL_ADDRESS);
        seg.cached.clear(block);
        seg.entries[block] = null;
        used--;
    }

    /** Offers a segment's cached blocks in offset order, evicting those the scan selects, until it is done. */
    private void walk(final Seg seg, final EvictionScan scan) {
        for (int b = seg.cached.nextSetBit(0); b >= 0 && !scan.isDone(); b = seg.cached.nextSetBit(b + 1)) {
            if (scan.select(seg.name, seg.entries[b])) {
                evict(seg, b);
            }
        }
    }

    /** This cache as the manager's passes see a store: every segment in table order, or the oldest first. */
    private final class Source implements EvictionSource {
        @Override
        public int scan(final EvictionScan scan) {
            for (final Seg seg : live) {
                if (scan.isDone()) {
                    break;
                }
                walk(seg, scan);
            }
            return 0;
        }

        @Override
        public boolean walksOldestFirst() {
            return true;
        }

        @Override
        public int scanOldestFirst(final EvictionScan scan, final int current) {
            return byGeneration.scan(scan, current);
        }
    }

    /** How the shared listing reaches a simulated segment (the store's {@code SegmentsByGeneration} does the same for a Segment). */
    private final class SegMembers implements GenerationLists.Members<Seg> {
        @Override
        public Seg next(final Seg seg) {
            return seg.nextListed;
        }

        @Override
        public void next(final Seg seg, final Seg next) {
            seg.nextListed = next;
        }

        @Override
        public int listedGeneration(final Seg seg) {
            return seg.listedGeneration;
        }

        @Override
        public long walk(final Seg seg, final EvictionScan scan, final int current) {
            PolicyCache.this.walk(seg, scan);
            boolean found = false;
            int oldest = 0;
            for (int b = seg.cached.nextSetBit(0); b >= 0; b = seg.cached.nextSetBit(b + 1)) {
                final int g = seg.entries[b].generation();
                if (!found || current - g > current - oldest) {
                    found = true;
                    oldest = g;
                }
            }
            if (!found) {
                seg.listed = false;
                return GenerationLists.NONE;
            }
            seg.listedGeneration = GenerationLists.bounded(oldest, current);
            return seg.listedGeneration;
        }
    }

    /** The simulated time: accesses so far. Confined to the simulating thread. */
    static final class Clock implements java.util.function.LongSupplier {
        long now;

        @Override
        public long getAsLong() {
            return now;
        }
    }

    /** A segment's cached entries, by block. */
    private static final class Seg {
        final String name;
        final BitSet cached = new BitSet();
        ReadIndexEntry[] entries = new ReadIndexEntry[64];
        /** In the oldest-first listing: whether listed, at which generation, and the next in its list. */
        boolean listed;
        int listedGeneration;
        Seg nextListed;

        Seg(final String name) {
            this.name = name;
        }

        void put(final int block, final ReadIndexEntry entry) {
            if (block >= entries.length) {
                entries = java.util.Arrays.copyOf(entries, Math.max(block + 1, entries.length * 2));
            }
            entries[block] = entry;
            cached.set(block);
        }
    }
}
