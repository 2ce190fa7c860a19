package io.streamcache.bench.scale;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;

import java.util.Arrays;
import java.util.Locale;

/**
 * How long building a block cache takes, per capacity and commit mode of its direct memory, and
 * how long the first write into every block then takes (where a lazily committed region pays
 * for its pages). Single-threaded; each build in a fresh cache, closed before the next.
 *
 * <pre>
 *   java -XX:MaxDirectMemorySize=5g -cp streamcache-bench.jar io.streamcache.bench.scale.BuildTime 1 4
 * </pre>
 * Arguments: capacities in GiB (default 1 4). Prints, per capacity and mode, the median and range
 * of {@value #REPEATS} builds, and of the fill that writes one byte into every block after it.
 */
public final class BuildTime {
    private static final int REPEATS = 5;

    private BuildTime() {
    }

    public static void main(final String[] args) {
        final long[] capacities = args.length == 0 ? new long[] {1, 4} : Arrays.stream(args).mapToLong(Long::parseLong).toArray();
        System.out.println("capacity  commit  build median [min, max] s   first write of every page median [min, max] s");
        for (final long gib : capacities) {
            for (final DirectMemoryRegion.Commit commit : DirectMemoryRegion.Commit.values()) {
                final double[] builds = new double[REPEATS];
                final double[] fills = new double[REPEATS];
                for (int r = 0; r < REPEATS; r++) {
                    final long start = System.nanoTime();
                    try (BlockCache cache = BlockCache.builder().capacity(gib << 30).registerMBean(false)
                        .region(DirectMemoryRegion.factory(commit)).build()) {
                        final long built = System.nanoTime();
                        builds[r] = (built - start) / 1e9;
                        touchEveryPage(cache);
                        fills[r] = (System.nanoTime() - built) / 1e9;
                    }
                }
                System.out.printf(Locale.ROOT, "%5d GiB  %-6s  %s   %s%n", gib, commit, summary(builds), summary(fills));
            }
        }
    }

    /** Fills the cache with one-block entries (writing every byte of each), then deletes them. */
    private static void touchEveryPage(final BlockCache cache) {
        final byte[] block = new byte[cache.blockLength()];
        final io.netty.buffer.ByteBuf data = io.netty.buffer.Unpooled.wrappedBuffer(block);
        final int count = (int)Math.min(Integer.MAX_VALUE, cache.stats().freeBlockCount());
        final int[] addresses = new int[count];
        for (int i = 0; i < count; i++) {
            addresses[i] = cache.insert(data.duplicate());
        }
        for (final int address : addresses) {
            cache.delete(address);
        }
    }

    private static String summary(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return String.format(Locale.ROOT, "%6.3f [%6.3f, %6.3f]", sorted[sorted.length / 2], sorted[0], sorted[sorted.length - 1]);
    }
}
