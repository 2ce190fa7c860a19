package io.streamcache.segmentstore.internal.compaction;

import io.streamcache.log.internal.location.LocationIndex;
import org.agrona.collections.Long2LongHashMap;

/**
 * Decides whether the log needs compaction and which file to compact: stateless and
 * thread-safe; the {@link Compactor} calls it with what the location indexes say.
 *
 * <h2>Rule</h2>
 * <pre>
 *  disk = files (not spares, the current one included) * fileLength
 *  live = sum over live segments of their indexed bytes at or after their start offset
 *  compact when disk &gt; live + slack:
 *     the file before the current one with the least live bytes (the oldest on a tie),
 *     provided its live bytes are below {@link #MAX_LIVE_FRACTION} of a file
 *     (copying a file that is mostly live frees little and costs a file's worth of writes)
 * </pre>
 * A file with no live byte left is compacted first: it costs no copy, only its retirement.
 */
public final class CompactionPlanner {
    /** A file is worth compacting while less than this fraction of it is live: 3/4. */
    public static final double MAX_LIVE_FRACTION = 0.75;

    private CompactionPlanner() {
    }

    /**
     * A decision: compact {@code fileNumber}.
     *
     * @param fileNumber the file to compact.
     * @param liveLength its live bytes (to copy).
     * @param diskLength the files' bytes now.
     * @param liveTotal  the live bytes of all files.
     */
    public record Plan(long fileNumber, long liveLength, long diskLength, long liveTotal) {
    }

    /**
     * Live bytes per file.
     */
    public static final class Usage {
        private final Long2LongHashMap liveByFile = new Long2LongHashMap(0);
        private long liveTotal;

        /**
         * Adds one segment's live bytes: every indexed record's bytes at or after its start offset.
         */
        public void add(final LocationIndex index) {
            final long start = index.startOffset();
            index.forEach((offset, length, fileNumber, position) -> add(fileNumber, offset + length - Math.max(offset, start)));
        }

        /**
         * Adds {@code liveLength} bytes in {@code fileNumber} (ignored if not positive).
         */
        public void add(final long fileNumber, final long liveLength) {
            if (liveLength > 0) {
                liveByFile.put(fileNumber, liveByFile.get(fileNumber) + liveLength);
                liveTotal += liveLength;
            }
        }

        public long live(final long fileNumber) {
            return liveByFile.get(fileNumber);
        }

        public long liveTotal() {
            return liveTotal;
        }
    }

    /**
     * @param fileNumbers the log's files (not spares), the current one included.
     * @param currentFile the file the writer writes now: never compacted, nor any after it.
     * @param fileLength  every file's length.
     * @param slack       bytes the files may exceed the live data by.
     * @param usage       the live bytes per file.
     * @return the file to compact, or null if the files are within the bound or no file is worth it.
     */
    public static Plan choose(final long[] fileNumbers, final long currentFile, final long fileLength, final long slack,
                              final Usage usage) {
        final long disk = fileNumbers.length * fileLength;
        if (disk <= usage.liveTotal() + slack) {
            return null;
        }
        long best = -1;
        long bestLive = Long.MAX_VALUE;
        for (final long number : fileNumbers) {
            if (number >= currentFile) {
                continue;
            }
            final long live = usage.live(number);
            if (live < bestLive || (live == bestLive && number < best)) {
                best = number;
                bestLive = live;
            }
        }
        if (best < 0 || bestLive >= MAX_LIVE_FRACTION * fileLength) {
            return null;
        }
        return new Plan(best, bestLive, disk, usage.liveTotal());
    }
}
