package io.streamcache.segmentstore;

/**
 * Where the sequential readers of one segment are, inferred from its reads, so that eviction can
 * spare the bytes they have not read yet: guarded by the segment's lock (written by its reads,
 * read by the eviction scan, which holds the lock too); made with the segment's first read.
 *
 * <p>A read that starts within a slot's last read (from its start to its end) continues that
 * reader; any other read takes the least recently read slot. A slot counts as a
 * <em>sequential</em> reader only once it has read on past its first read that returned bytes:
 * one read is no reader (a key/value access, a probe, a read-through's miss and its second
 * read), as in the reader-aware policy's inference. Its position
 * is the end of its last read: the bytes before it are <em>passed</em>, those from it on are
 * <em>unread</em>. A catch-up reader and a slow tail reader look alike here: both read on
 * sequentially, both have unread bytes ahead.
 *
 * <p>Pulsar's managed-ledger cache does the like with its cursors: its eviction drops the
 * entries before the slowest active reader's read position first, and a cursor far behind
 * (backlogged) is made inactive so that its reads are not cached at all. Pravega keeps tail and
 * historical reads apart by serving history from long-term storage; here both share one cache,
 * and these marks are what lets a fill from the log pass over the unread bytes of every live
 * reader.
 *
 * <p>Allocation-free after construction (four slots, primitive arrays): about 210 bytes of heap
 * per segment that has been read, on top of the segment's own 120.
 */
final class ReaderMarks {
    /** Readers told apart per segment; the least recently read slot is taken beyond that. */
    static final int SLOTS = 4;
    /** A slot's time while it holds no reader. */
    private static final long FREE = Long.MIN_VALUE;
    /**
     * A slot's first end while it has read no byte (only misses: a read-through asks the cache,
     * loads, and asks again): its first read that returns bytes is its first read.
     */
    private static final long NO_DATA = -1;

    private final long[] from = new long[SLOTS];
    private final long[] end = new long[SLOTS];
    private final long[] firstEnd = new long[SLOTS];
    private final long[] time = new long[SLOTS];

    ReaderMarks() {
        java.util.Arrays.fill(time, FREE);
    }

    /**
     * A read of {@code [offset, readEnd)} at {@code now} (nanoseconds). Under the segment's lock.
     */
    void observe(final long offset, final long readEnd, final long now) {
        int reuse = 0;
        long oldest = Long.MAX_VALUE;
        for (int i = 0; i < SLOTS; i++) {
            final long t = time[i];
            if (t != FREE && from[i] <= offset && offset <= end[i]) {
                from[i] = offset;
                if (readEnd > end[i]) {
                    end[i] = readEnd;
                }
                if (firstEnd[i] == NO_DATA && readEnd > offset) {
                    firstEnd[i] = readEnd;
                }
                time[i] = now;
                return;
            }
            if (t == FREE) {
                if (oldest != FREE) {
                    reuse = i;
                    oldest = FREE;
                }
            } else if (oldest != FREE && t < oldest) {
                oldest = t;
                reuse = i;
            }
        }
        from[reuse] = offset;
        end[reuse] = Math.max(offset, readEnd);
        firstEnd[reuse] = readEnd > offset ? readEnd : NO_DATA;
        time[reuse] = now;
    }

    /**
     * @param now         the clock now (nanoseconds, as {@link #observe} was given).
     * @param idleTimeout nanoseconds a reader may go without reading and still count as live.
     * @return the position of the slowest live sequential reader (its next byte), or
     *         {@link Long#MAX_VALUE} if the segment has none: entries that end after it hold
     *         bytes some live reader has not read yet. Under the segment's lock.
     */
    long slowestLive(final long now, final long idleTimeout) {
        long slowest = Long.MAX_VALUE;
        for (int i = 0; i < SLOTS; i++) {
            final long t = time[i];
            if (t != FREE && now - t <= idleTimeout && firstEnd[i] != NO_DATA && end[i] > firstEnd[i] && end[i] < slowest) {
                slowest = end[i];
            }
        }
        return slowest;
    }
}
