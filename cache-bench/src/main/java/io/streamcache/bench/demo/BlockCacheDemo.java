package io.streamcache.bench.demo;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.SplittableRandom;

/**
 * A short, self-checking tour of the block cache: segment-like entries grown by appends, read
 * back as views and copies, a full cache evicting through its handler, and a stale address
 * caught. Single-threaded; returns a process exit code (0 when every check held).
 */
public final class BlockCacheDemo {
    private static final int SEGMENTS = 64;
    private static final int APPENDS = 200;

    private BlockCacheDemo() {
    }

    public static int run(final String[] args, final PrintStream out) {
        final long capacity = args.length > 0 ? Long.parseLong(args[0]) : 32L << 20;
        final Deque<Integer> fifo = new ArrayDeque<>();
        try (BlockCache cache = BlockCache.builder().capacity(capacity).name("demo").registerMBean(false).build()) {
            out.printf("built %s: capacity=%d bytes, %d buffers of %d bytes, blocks of %d bytes (%s)%n", cache.name(),
                cache.capacity(), cache.stats().bufferCount(), cache.bufferLength(), cache.blockLength(), cache.regionDescription());

            // 1. Segment tails: each entry grows by small appends, like a segment's last index entry.
            final SplittableRandom random = new SplittableRandom(1);
            final int[] addresses = new int[SEGMENTS];
            final byte[][] expected = new byte[SEGMENTS][];
            final ByteBuf event = Unpooled.buffer(512);
            for (int s = 0; s < SEGMENTS; s++) {
                addresses[s] = cache.insert(Unpooled.EMPTY_BUFFER);
                expected[s] = new byte[0];
            }
            long appended = 0;
            for (int i = 0; i < APPENDS; i++) {
                for (int s = 0; s < SEGMENTS; s++) {
                    final int length = 1 + random.nextInt(300);
                    event.clear();
                    for (int b = 0; b < length; b++) {
                        event.writeByte(random.nextInt(256));
                    }
                    addresses[s] = cache.append(addresses[s], event);
                    final byte[] grown = Arrays.copyOf(expected[s], expected[s].length + length);
                    event.getBytes(0, grown, expected[s].length, length);
                    expected[s] = grown;
                    appended += length;
                }
            }
            out.printf("appended %d events (%d bytes) to %d entries: %s%n", APPENDS * SEGMENTS, appended, SEGMENTS, describe(cache.stats()));

            // 2. Read them back: a zero-copy view of each whole entry, and a copy of its tail.
            int checked = 0;
            final ByteBuf copy = Unpooled.directBuffer(4096);
            for (int s = 0; s < SEGMENTS; s++) {
                final ByteBuf view = cache.view(addresses[s]);
                check(ByteBufUtil.getBytes(view), expected[s], "view of entry " + s);
                final int tail = Math.min(4096, expected[s].length);
                cache.copyTo(addresses[s], expected[s].length - tail, copy, 0, tail);
                check(ByteBufUtil.getBytes(copy, 0, tail), Arrays.copyOfRange(expected[s], expected[s].length - tail, expected[s].length),
                    "tail copy of entry " + s);
                checked += 2;
            }
            out.printf("verified %d reads (views and copies) byte for byte%n", checked);

            // 3. A stale address: the address of an entry's old last block is rejected, not misread.
            final int entry = cache.insert(Unpooled.wrappedBuffer(new byte[4000]));
            final int grown = cache.append(entry, Unpooled.wrappedBuffer(new byte[200]));
            try {
                cache.length(entry);
                out.println("FAILED: a stale address was accepted");
                return 1;
            } catch (final InvalidAddressException e) {
                out.printf("stale address rejected: %s%n", e.getMessage());
            }
            cache.delete(grown);

            // 4. Fill the cache with 100 KB entries; the full handler evicts the oldest (FIFO).
            cache.fullHandler(blocks -> {
                final Integer oldest = fifo.pollFirst();
                if (oldest == null) {
                    return false;
                }
                cache.delete(oldest);
                return true;
            });
            final ByteBuf large = Unpooled.wrappedBuffer(new byte[100 * 1024]).writerIndex(100 * 1024);
            final int inserts = (int)(2 * cache.capacity() / (100 * 1024));
            for (int i = 0; i < inserts; i++) {
                fifo.addLast(cache.insert(large));
            }
            final CacheStats stats = cache.stats();
            out.printf("inserted %d entries of 100 KB into a %d-byte cache; the full handler evicted %d times: %s%n",
                inserts, cache.capacity(), stats.fullHandlerCalls(), describe(stats));

            // 5. With nothing left to evict, a full cache fails with a dedicated exception, changing nothing.
            for (final int s : addresses) {
                cache.delete(s);
            }
            cache.fullHandler(blocks -> false);
            final long usedBefore = cache.stats().usedBlockCount();
            try {
                while (true) {
                    fifo.addLast(cache.insert(large));
                }
            } catch (final CacheFullException e) {
                out.printf("full cache: %s%n", e.getMessage());
            }
            check(cache.stats().usedBlockCount() >= usedBefore, "no block leaked by the failed insert");
            out.printf("final: %s%n", describe(cache.stats()));
            out.println("demo OK");
            return 0;
        }
    }

    private static String describe(final CacheStats stats) {
        return String.format("entries=%d stored=%d bytes, blocks used=%d free=%d, utilization=%.1f%%, metadata=%d bytes",
            stats.entryCount(), stats.storedBytes(), stats.usedBlockCount(), stats.freeBlockCount(), 100 * stats.utilization(),
            stats.metadataBytes());
    }

    private static void check(final byte[] actual, final byte[] expected, final String what) {
        if (!Arrays.equals(actual, expected)) {
            throw new IllegalStateException("mismatch in " + what + ": " + new String(actual, 0, Math.min(16, actual.length),
                StandardCharsets.ISO_8859_1));
        }
    }

    private static void check(final boolean condition, final String what) {
        if (!condition) {
            throw new IllegalStateException("check failed: " + what);
        }
    }
}
