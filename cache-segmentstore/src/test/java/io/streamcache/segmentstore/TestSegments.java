package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexTree;
import io.streamcache.log.testing.TestBytes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Deterministic segment contents, small caches and stores, and index inspection for the
 * segment-store tests. Stateless; safe from any thread (the inspection takes the segment's lock).
 */
public final class TestSegments {
    /** Block length of the test caches: small, so that entries span several blocks. */
    public static final int BLOCK_LENGTH = 256;
    /** Buffer length of the test caches. */
    public static final int BUFFER_LENGTH = 8 * 1024;

    private TestSegments() {
    }

    /**
     * @return byte {@code offset} of the segment named {@code seed} (see {@link TestBytes#at(long, long)}).
     */
    public static byte at(final long seed, final long offset) {
        return TestBytes.at(seed, offset);
    }

    /**
     * @return bytes {@code [from, from + length)} of the pattern named {@code seed}.
     */
    public static byte[] pattern(final long seed, final long from, final int length) {
        return TestBytes.pattern(seed, from, length);
    }

    /**
     * @return a heap buffer holding bytes {@code [from, from + length)} of the pattern, with a
     *         few junk bytes before its reader index (see {@link TestBytes#buffer(long, long, int)}).
     */
    public static ByteBuf buffer(final long seed, final long from, final int length) {
        return TestBytes.buffer(seed, from, length);
    }

    /**
     * @return the result's data copied out.
     */
    public static byte[] bytes(final ReadResult result) {
        return ByteBufUtil.getBytes(result.data());
    }

    /**
     * @return a cache of {@code capacity} bytes in 8 KB buffers of 256-byte blocks (31 data blocks each), without JMX.
     */
    public static BlockCache cache(final long capacity) {
        return BlockCache.builder()
            .capacity(capacity)
            .blockLength(BLOCK_LENGTH)
            .bufferLength(BUFFER_LENGTH)
            .fullRetryTimeout(Duration.ofSeconds(2))
            .registerMBean(false)
            .build();
    }

    /**
     * @return a builder of a manager with no thread (passes only on demand and when full), no JMX.
     */
    public static CacheManager.Builder manualManager(final BlockCache cache) {
        return CacheManager.builder(cache).generationPeriod(Duration.ZERO).registerMBean(false);
    }

    /**
     * @return a store over {@code cache} with a manual manager and the given entry length.
     */
    public static SegmentStore store(final BlockCache cache, final int maxIndexEntryLength) {
        return SegmentStore.builder(cache)
            .maxIndexEntryLength(maxIndexEntryLength)
            .cacheManager(manualManager(cache))
            .build();
    }

    /**
     * An index entry as seen by a test.
     *
     * @param offset the entry's first offset.
     * @param length its length.
     * @param cached whether its bytes are in the cache.
     * @param pins   pins held.
     */
    public record EntryView(long offset, int length, boolean cached, int pins) {
    }

    /**
     * @return the segment's index entries in offset order, read under its lock.
     */
    public static List<EntryView> entries(final SegmentStore store, final String name) {
        final Segment segment = store.segmentOrNull(name);
        final List<EntryView> entries = new ArrayList<>();
        segment.lock();
        try {
            ReadIndexTree.forEach(segment.indexRoot, (ReadIndexEntry e) -> entries.add(new EntryView(e.offset(), e.length(), e.isCached(), e.pinCount())));
        } finally {
            segment.unlock();
        }
        return entries;
    }

    /**
     * @return the generations of the segment's index entries in offset order, read under its lock.
     */
    public static List<Integer> generations(final SegmentStore store, final String name) {
        final Segment segment = store.segmentOrNull(name);
        final List<Integer> generations = new ArrayList<>();
        segment.lock();
        try {
            ReadIndexTree.forEach(segment.indexRoot, (ReadIndexEntry e) -> generations.add(e.generation()));
        } finally {
            segment.unlock();
        }
        return generations;
    }

    /**
     * @return the cache tier of each of the segment's index entries in offset order (-1 for an
     *         entry not cached), read under its lock.
     */
    public static List<Integer> tiers(final SegmentStore store, final String name) {
        final Segment segment = store.segmentOrNull(name);
        final BlockCache cache = store.cache();
        final List<Integer> tiers = new ArrayList<>();
        segment.lock();
        try {
            ReadIndexTree.forEach(segment.indexRoot, (ReadIndexEntry e) -> tiers.add(e.isCached() ? cache.tierOf(e.address()) : -1));
        } finally {
            segment.unlock();
        }
        return tiers;
    }

    /**
     * @return a cache of two tiers in direct memory, in 8 KB buffers of 256-byte blocks (31 data
     *         blocks each), without JMX.
     */
    public static BlockCache tieredCache(final int fastBuffers, final int slowBuffers) {
        return BlockCache.builder()
            .tier("fast", (long) fastBuffers * BUFFER_LENGTH, io.streamcache.core.memory.DirectMemoryRegion.factory())
            .tier("slow", (long) slowBuffers * BUFFER_LENGTH, io.streamcache.core.memory.DirectMemoryRegion.factory())
            .blockLength(BLOCK_LENGTH)
            .bufferLength(BUFFER_LENGTH)
            .fullRetryTimeout(Duration.ofMillis(200))
            .registerMBean(false)
            .build();
    }

    /**
     * @return how many reads wait on the segment now.
     */
    public static int waiterCount(final SegmentStore store, final String name) {
        final Segment segment = store.segmentOrNull(name);
        segment.lock();
        try {
            return segment.waiterCountLocked();
        } finally {
            segment.unlock();
        }
    }
}
