package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import static io.streamcache.core.cache.TestBytes.concat;
import static io.streamcache.core.cache.TestBytes.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A randomized model test of resizing under contention: worker threads insert, append, delete
 * and read entries held in slots (each slot with its own lock, as a segment store's segments),
 * checking every read against a byte-array reference, while a resizer thread grows and shrinks
 * the tier, moving the entries of draining buffers under the slots' locks (or dropping them,
 * as eviction drops durable data). At the end every entry still equals its reference, the
 * used blocks equal the reference's, and each completed shrink left exactly its target.
 *
 * <p>{@code -Dstreamcache.resize.rounds=N} runs a longer variant (default 40 resizes).
 */
class TierResizeModelTest {
    private static final int BLOCK = 1024;
    private static final int SLOTS = 96;
    private static final int WORKERS = 3;
    private static final int ROUNDS = Integer.getInteger("streamcache.resize.rounds", 40);

    @TempDir
    Path directory;

    /** One entry and its reference; guarded by {@link #lock}. */
    private static final class Slot {
        final ReentrantLock lock = new ReentrantLock();
        int address;
        byte[] model;
    }

    @ParameterizedTest
    @ValueSource(strings = {"direct", "mapped", "many"})
    void resizesUnderContentionKeepEveryEntryIntact(final String kind) throws Exception {
        final MemoryRegionFactory region = kind.equals("mapped") ? MappedFileRegion.factory(directory.resolve("model"))
            : DirectMemoryRegion.factory();
        // "many": 128 small buffers, so that choosing the buffers to drain sorts many of them
        // while their free counts change.
        final int bufferLength = kind.equals("many") ? 4 * BLOCK : 64 << 10;
        final int maxBuffers = kind.equals("many") ? 128 : 8;
        final long seed = System.nanoTime();
        try (BlockCache cache = BlockCache.builder().bufferLength(bufferLength).blockLength(BLOCK).capacity(4L * bufferLength)
            .maxCapacity((long)maxBuffers * bufferLength).region(region).registerMBean(false).fullRetryTimeout(Duration.ZERO).build()) {
            final Slot[] slots = new Slot[SLOTS];
            for (int i = 0; i < SLOTS; i++) {
                slots[i] = new Slot();
            }
            final AtomicBoolean stop = new AtomicBoolean();
            final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
            final List<Future<Long>> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                final Random random = new Random(seed + w);
                workers.add(pool.submit(() -> work(cache, slots, random, stop)));
            }
            final Random random = new Random(seed - 1);
            int shrinks = 0;
            try {
                for (int round = 0; round < ROUNDS; round++) {
                    final int target = 1 + random.nextInt(maxBuffers);
                    final long before = cache.tierCapacity(0);
                    if ((long)target * bufferLength >= before) {
                        assertEquals((long)target * bufferLength, cache.resize(0, (long)target * bufferLength), "seed=" + seed);
                        continue;
                    }
                    shrinks++;
                    try (TierShrink shrink = cache.startShrink(0, (long)target * bufferLength)) {
                        for (int pass = 0; !shrink.isComplete(); pass++) {
                            assertTrue(pass < 1000, "a shrink that drops what it cannot move completes; seed=" + seed);
                            for (final Slot slot : slots) {
                                slot.lock.lock();
                                try {
                                    if (slot.address != 0 && shrink.touches(slot.address)) {
                                        try {
                                            slot.address = cache.relocate(slot.address, 0);
                                        } catch (final CacheFullException e) {
                                            cache.delete(slot.address);
                                            slot.address = 0;
                                            slot.model = null;
                                        }
                                    }
                                } finally {
                                    slot.lock.unlock();
                                }
                            }
                            shrink.release();
                            Thread.yield();
                        }
                        assertEquals((long)target * bufferLength, cache.tierCapacity(0), "seed=" + seed);
                    }
                }
            } finally {
                stop.set(true);
                pool.shutdown();
                assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
            }
            long operations = 0;
            for (final Future<Long> worker : workers) {
                operations += worker.get();
            }
            assertTrue(operations > 0);
            assertTrue(shrinks > 0 || ROUNDS < 10, "seed=" + seed);
            long blocks = 0;
            long entries = 0;
            long bytes = 0;
            for (final Slot slot : slots) {
                if (slot.address != 0) {
                    assertArrayEquals(slot.model, read(cache, slot.address), "seed=" + seed);
                    blocks += Math.max(1, (slot.model.length + BLOCK - 1) / BLOCK);
                    entries++;
                    bytes += slot.model.length;
                }
            }
            assertEquals(blocks, cache.stats().usedBlockCount(), "no block leaked or lost; seed=" + seed);
            // Inserts and deletes count in their buffers, appends and relocations in the tier, and
            // a released buffer's counts go to its tier: the sums stay exact.
            assertEquals(entries, cache.stats().entryCount(), "entries; seed=" + seed);
            assertEquals(bytes, cache.stats().storedBytes(), "stored bytes; seed=" + seed);
            assertTrue(cache.capacity() <= (long)maxBuffers * bufferLength);
        }
    }

    private static long work(final BlockCache cache, final Slot[] slots, final Random random, final AtomicBoolean stop) {
        long operations = 0;
        while (!stop.get()) {
            final Slot slot = slots[random.nextInt(slots.length)];
            slot.lock.lock();
            try {
                operations++;
                if (slot.address == 0) {
                    final byte[] bytes = pattern(random.nextLong(), random.nextInt(3 * BLOCK));
                    try {
                        slot.address = cache.insert(Unpooled.wrappedBuffer(bytes));
                        slot.model = bytes;
                    } catch (final CacheFullException e) {
                        // full: fine
                    }
                    continue;
                }
                assertArrayEquals(slot.model, read(cache, slot.address));
                final int choice = random.nextInt(4);
                if (choice == 0) {
                    cache.delete(slot.address);
                    slot.address = 0;
                    slot.model = null;
                } else if (choice == 1 && slot.model.length < 16 * BLOCK) {
                    final byte[] more = pattern(random.nextLong(), random.nextInt(BLOCK + 100));
                    try {
                        slot.address = cache.append(slot.address, Unpooled.wrappedBuffer(more));
                        slot.model = concat(slot.model, more);
                    } catch (final CacheFullException e) {
                        assertArrayEquals(slot.model, read(cache, slot.address), "a failed append changes nothing");
                    }
                }
            } finally {
                slot.lock.unlock();
            }
        }
        return operations;
    }

    private static byte[] read(final BlockCache cache, final int address) {
        final byte[] bytes = new byte[cache.length(address)];
        cache.copyTo(address, 0, ByteBuffer.wrap(bytes));
        return bytes;
    }
}
