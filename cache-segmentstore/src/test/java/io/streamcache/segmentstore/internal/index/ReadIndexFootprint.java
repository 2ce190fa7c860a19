package io.streamcache.segmentstore.internal.index;

/**
 * Measures the heap bytes per read-index entry; a program, not a test (heap figures are too
 * noisy to assert). Single-threaded.
 *
 * <p>Run after {@code mvn -o test-compile -pl cache-segmentstore}:
 * <pre>
 *   java -Xmx1g -XX:+UseSerialGC -cp cache-segmentstore/target/classes:cache-segmentstore/target/test-classes:$HOME/.m2/repository/io/streamcache/cache-core/0.1.0-SNAPSHOT/cache-core-0.1.0-SNAPSHOT.jar \
 *       io.streamcache.segmentstore.internal.index.ReadIndexFootprint [entries]
 * </pre>
 * It inserts the entries into one {@link AvlReadIndex} (ascending offsets, as appends do), so
 * the figure includes everything the index holds per entry.
 */
public final class ReadIndexFootprint {
    private ReadIndexFootprint() {
    }

    public static void main(final String[] args) throws InterruptedException {
        final int count = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        // Warm up the classes and code paths so that their footprint is not counted.
        final AvlReadIndex warmUp = new AvlReadIndex();
        for (int i = 0; i < 10_000; i++) {
            warmUp.insert(new ReadIndexEntry(i, 1, i + 1, 0));
        }
        warmUp.clear();

        final long before = usedHeap();
        final AvlReadIndex index = new AvlReadIndex();
        for (int i = 0; i < count; i++) {
            index.insert(new ReadIndexEntry((long) i * 4096, 4096, i + 1, 0));
        }
        final long after = usedHeap();
        index.checkInvariants();
        System.out.printf("entries=%d heapBytes=%d bytesPerEntry=%.2f height=%d%n",
            index.size(), after - before, (double) (after - before) / index.size(), index.height());
    }

    private static long usedHeap() throws InterruptedException {
        final Runtime runtime = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 8; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, runtime.totalMemory() - runtime.freeMemory());
        }
        return used;
    }
}
