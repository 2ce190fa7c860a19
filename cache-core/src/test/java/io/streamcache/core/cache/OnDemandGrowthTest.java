package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import io.streamcache.core.memory.OnDemandRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cache over an on-demand direct region growing under contention: no lock is held while a
 * buffer's memory is allocated, so one thread in the middle of an allocation holds up no other;
 * at most the cache's buffers ever get memory; and an allocation that finds every buffer
 * claimed while another thread is still allocating the last one waits for it rather than fails.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OnDemandGrowthTest {
    private static final int BLOCK = 4096;
    private static final int BUFFER = 64 * 1024;
    private static final int DATA_BLOCKS_PER_BUFFER = BUFFER / BLOCK - 1;

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    private static BlockCache.Builder builder(final int buffers, final MemoryRegionFactory region) {
        return BlockCache.builder().region(region).registerMBean(false).blockLength(BLOCK).bufferLength(BUFFER)
            .capacity((long)buffers * BUFFER)
            // Nothing to evict: a refusal can only come from the allocator itself.
            .fullHandler(count -> false);
    }

    @Test
    void shouldLetAnotherThreadGrowTheCacheWhileOneIsAllocating() throws Exception {
        final GatedRegion gate = new GatedRegion();
        try (BlockCache cache = builder(2, gate).build()) {
            final Future<Integer> first = threads.submit(() -> cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK])));
            assertTrue(gate.reached.await(60, TimeUnit.SECONDS), "the first insert is allocating its buffer");
            // Under a lock held across the allocation this insert would wait for the first.
            final Future<Integer> second = threads.submit(() -> cache.insert(Unpooled.wrappedBuffer(new byte[2 * BLOCK])));
            final int address = second.get(60, TimeUnit.SECONDS);
            assertEquals(2 * BLOCK, cache.length(address), "an entry in the buffer published above the one still allocating");
            assertFalse(first.isDone(), "the first is still allocating");
            gate.release.countDown();
            final int other = first.get(60, TimeUnit.SECONDS);
            assertEquals(BLOCK, cache.length(other));
            assertTrue((address >>> 4) != (other >>> 4), "each got a buffer of its own");
            assertEquals(2, cache.allocatedBufferCount());
            assertEquals(2L * DATA_BLOCKS_PER_BUFFER - 3, cache.stats().freeBlockCount());
        }
    }

    @Test
    void shouldWaitForTheLastBufferAnotherThreadIsAllocatingRatherThanFail() throws Exception {
        final GatedRegion gate = new GatedRegion();
        try (BlockCache cache = builder(1, gate).build()) {
            final Future<Integer> first = threads.submit(() -> cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK])));
            assertTrue(gate.reached.await(60, TimeUnit.SECONDS), "the first insert is allocating the only buffer");
            final CompletableFuture<Thread> started = new CompletableFuture<>();
            final Future<Integer> second = threads.submit(() -> {
                started.complete(Thread.currentThread());
                return cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK]));
            });
            final Thread thread = started.get(60, TimeUnit.SECONDS);
            // The cache is not full (its one buffer is on its way): the second insert waits,
            // where calling the full handler (which frees nothing) would have failed it.
            while (!second.isDone() && thread.getState() != Thread.State.TIMED_WAITING && thread.getState() != Thread.State.WAITING) {
                Thread.onSpinWait();
            }
            assertFalse(second.isDone(), "the second insert neither failed nor completed while the only buffer was allocating");
            gate.release.countDown();
            assertEquals(BLOCK, cache.length(first.get(60, TimeUnit.SECONDS)));
            assertEquals(BLOCK, cache.length(second.get(60, TimeUnit.SECONDS)));
            assertEquals(0, cache.stats().fullFailures());
            assertEquals(1, cache.allocatedBufferCount());
        }
    }

    /**
     * Eight threads fill fresh caches of 16 buffers with single-block entries, exactly their
     * capacity between them, many rounds: every insert succeeds (no refusal while buffers are
     * being given memory), every buffer gets memory once, and the next insert is refused.
     */
    @Test
    void shouldFillExactlyItsCapacityWhenThreadsGrowItAtOnce() throws Exception {
        final int buffers = 16;
        final int writers = 8;
        final int perWriter = buffers * DATA_BLOCKS_PER_BUFFER / writers;
        for (int round = 0; round < 30; round++) {
            try (BlockCache cache = builder(buffers, DirectMemoryRegion.factory()).build()) {
                final CyclicBarrier start = new CyclicBarrier(writers);
                final List<Future<List<Integer>>> results = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    results.add(threads.submit(() -> {
                        final List<Integer> mine = new ArrayList<>();
                        start.await();
                        for (int i = 0; i < perWriter; i++) {
                            mine.add(cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK])));
                        }
                        return mine;
                    }));
                }
                final Set<Integer> addresses = new HashSet<>();
                for (final Future<List<Integer>> result : results) {
                    addresses.addAll(result.get(60, TimeUnit.SECONDS));
                }
                assertEquals(writers * perWriter, addresses.size(), "round " + round + ": every block given once");
                assertEquals(buffers, cache.allocatedBufferCount(), "round " + round);
                assertEquals(0, cache.stats().freeBlockCount(), "round " + round);
                assertEquals(0, cache.stats().fullFailures(), "round " + round);
                assertThrows(CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK])));
            }
        }
    }

    /**
     * The direct region's own bound under contention: 8 threads ask 32 buffers of a region of
     * 16 at once; exactly 16 calls get one, each a different index with its own memory.
     */
    @Test
    void shouldGiveEachConcurrentCallerItsOwnBufferAndNoMoreThanTheRegionHolds() throws Exception {
        for (int round = 0; round < 30; round++) {
            final OnDemandRegion region = (OnDemandRegion)DirectMemoryRegion.factory().open(16, BUFFER);
            try {
                final CyclicBarrier start = new CyclicBarrier(8);
                final List<Future<List<Integer>>> results = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    results.add(threads.submit(() -> {
                        final List<Integer> mine = new ArrayList<>();
                        start.await();
                        for (int i = 0; i < 4; i++) {
                            mine.add(region.allocate());
                        }
                        return mine;
                    }));
                }
                final Set<Integer> given = new HashSet<>();
                int refused = 0;
                for (final Future<List<Integer>> result : results) {
                    for (final int index : result.get(60, TimeUnit.SECONDS)) {
                        if (index < 0) {
                            refused++;
                        } else {
                            assertTrue(given.add(index), "round " + round + ": index " + index + " given twice");
                        }
                    }
                }
                assertEquals(16, given.size(), "round " + round + ": " + given);
                assertEquals(16, refused);
                assertEquals(16, region.allocatedCount());
                final Set<Long> addresses = new HashSet<>();
                for (int i = 0; i < 16; i++) {
                    final ByteBuffer buffer = region.buffer(i);
                    assertEquals(BUFFER, buffer.capacity());
                    assertTrue(addresses.add(org.agrona.BufferUtil.address(buffer)), "buffer " + i + " has memory of its own");
                }
                assertEquals(-1, region.allocate(), "every buffer has memory");
            } finally {
                region.close();
            }
        }
    }

    /**
     * The default direct region, whose first {@link OnDemandRegion#allocate()} stops once its
     * memory is had, before it returns: the state of a thread in the middle of giving the cache
     * a buffer (the zeroing of a large buffer takes milliseconds; the JDK's fallback at its
     * limit takes longer).
     */
    private static final class GatedRegion implements MemoryRegionFactory {
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        private final AtomicInteger calls = new AtomicInteger();

        @Override
        public MemoryRegion open(final int bufferCount, final int bufferLength) {
            final OnDemandRegion region = (OnDemandRegion)DirectMemoryRegion.factory().open(bufferCount, bufferLength);
            return new OnDemandRegion() {
                @Override
                public int allocate() {
                    final int index = region.allocate();
                    if (calls.getAndIncrement() == 0) {
                        reached.countDown();
                        try {
                            release.await();
                        } catch (final InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return index;
                }

                @Override
                public int allocatedCount() {
                    return region.allocatedCount();
                }

                @Override
                public int bufferCount() {
                    return region.bufferCount();
                }

                @Override
                public int bufferLength() {
                    return region.bufferLength();
                }

                @Override
                public ByteBuffer buffer(final int index) {
                    return region.buffer(index);
                }

                @Override
                public String description() {
                    return "gated " + region.description();
                }

                @Override
                public void close() {
                    region.close();
                }
            };
        }
    }
}
