package io.streamcache.segmentstore;

/**
 * Where the sequential readers of one segment are, inferred from its reads, so that eviction can
 * spare the bytes they have not read yet: guarded by the segment's lock (written by its reads,
 * read by the eviction scan, which holds the lock too); made with the segment's first read.
 *
 * <p>A read that starts within a slot's last read (from its start to its end) continues that
 * reader (the slot the previous read used is tried first, so a sequential reader's read touches one
 * cache line); any other read takes the least recently read slot. A slot counts as a
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
 * <p><b>No clock on the read path.</b> A read stamps its slot with the segment's read count, not
 * the time: a {@code System.nanoTime()} per read cost about 20 ns (a vDSO {@code clock_gettime},
 * nearly as much as a whole cached copy of 100 bytes, docs/performance/data-path.md). The time is attached
 * by the sweep instead, as the CLOCK algorithm (Corbato, 1968) approximates LRU with a reference
 * bit that an access sets and the sweeping hand reads: the eviction scan, which reads the clock
 * once per segment, sees which slots read since its last look and stamps them with its own time.
 * A reader therefore counts as live until {@code idleTimeout} after the first sweep that saw its
 * last read: never less than after the read itself, and longer by at most the time between two
 * sweeps of the segment. Scans are frequent exactly when sparing matters (the cache is under
 * pressure); a reader that stopped long before the first sweep of its segment is spared by that
 * sweep for one more idle timeout, then drops out.
 *
 * <p>Allocation-free after construction (four slots, primitive arrays): about 300 bytes of heap
 * per segment that has been read, on top of the segment's own 120.
 */
final class ReaderMarks {
    /** Readers told apart per segment; the least recently read slot is taken beyond that. */
    static final int SLOTS = 4;
    /** A slot's read number while it holds no reader (reads are numbered from 1). */
    private static final long FREE = 0;
    /**
     * A slot's first end while it has read no byte (only misses: a read-through asks the cache,
     * loads, and asks again): its first read that returns bytes is its first read.
     */
    private static final long NO_DATA = -1;

    /*
     * The slots, one 64-byte cache line each, in one array (a read touches one line):
     *
     *   slot i at words [8i, 8i + 8):
     *   +------+-----+----------+----------+-----------+---------+--------+
     *   | from | end | firstEnd | lastRead | sweptRead | sweptAt | unused |
     *   +------+-----+----------+----------+-----------+---------+--------+
     *     0      1     2          3          4           5         6, 7
     *
     * from, end: the slot's last read and the farthest byte it read; firstEnd: the end of its
     * first read that returned bytes (NO_DATA before); lastRead: its last read's number (FREE
     * if it holds no reader); sweptRead, sweptAt: the last read a sweep saw, and that sweep's time.
     */
    private static final int STRIDE = 8;
    private static final int FROM = 0;
    private static final int END = 1;
    private static final int FIRST_END = 2;
    private static final int LAST_READ = 3;
    private static final int SWEPT_READ = 4;
    private static final int SWEPT_AT = 5;

    private final long[] slots = new long[SLOTS * STRIDE];
    /** Reads observed so far. */
    private long reads;
    /** The first word of the slot the last read continued or took: a sequential reader's next read looks there first. */
    private int last;

    /**
     * A read of {@code [offset, readEnd)}. Under the segment's lock; no clock, no allocation.
     */
    void observe(final long offset, final long readEnd) {
        final long read = ++reads;
        final long[] w = slots;
        if (continues(w, last, offset, readEnd, read)) {
            return;
        }
        int reuse = 0;
        long oldest = Long.MAX_VALUE;
        for (int at = 0; at < w.length; at += STRIDE) {
            if (continues(w, at, offset, readEnd, read)) {
                last = at;
                return;
            }
            if (w[at + LAST_READ] < oldest) {
                oldest = w[at + LAST_READ];
                reuse = at;
            }
        }
        w[reuse + FROM] = offset;
        w[reuse + END] = Math.max(offset, readEnd);
        w[reuse + FIRST_END] = readEnd > offset ? readEnd : NO_DATA;
        w[reuse + LAST_READ] = read;
        w[reuse + SWEPT_READ] = FREE;
        last = reuse;
    }

    /** Continues the reader in the slot at {@code at} if the read starts within its last read. */
    private static boolean continues(final long[] w, final int at, final long offset, final long readEnd, final long read) {
        if (w[at + LAST_READ] == FREE || w[at + FROM] > offset || offset > w[at + END]) {
            return false;
        }
        w[at + FROM] = offset;
        if (readEnd > w[at + END]) {
            w[at + END] = readEnd;
        }
        if (w[at + FIRST_END] == NO_DATA && readEnd > offset) {
            w[at + FIRST_END] = readEnd;
        }
        w[at + LAST_READ] = read;
        return true;
    }

    /**
     * The sweep: stamps each slot that read since the last sweep with {@code now}, then answers
     * from the stamps.
     *
     * @param now         the sweeping thread's clock (nanoseconds, monotonic across sweeps).
     * @param idleTimeout nanoseconds a reader may go without reading and still count as live,
     *                    counted from the first sweep that saw its last read.
     * @return the position of the slowest live sequential reader (its next byte), or
     *         {@link Long#MAX_VALUE} if the segment has none: entries that end after it hold
     *         bytes some live reader has not read yet. Under the segment's lock.
     */
    long slowestLive(final long now, final long idleTimeout) {
        final long[] w = slots;
        long slowest = Long.MAX_VALUE;
        for (int at = 0; at < w.length; at += STRIDE) {
            final long r = w[at + LAST_READ];
            if (r == FREE) {
                continue;
            }
            if (w[at + SWEPT_READ] != r) {
                w[at + SWEPT_READ] = r;
                w[at + SWEPT_AT] = now;
            }
            final long end = w[at + END];
            final long firstEnd = w[at + FIRST_END];
            if (now - w[at + SWEPT_AT] <= idleTimeout && firstEnd != NO_DATA && end > firstEnd && end < slowest) {
                slowest = end;
            }
        }
        return slowest;
    }
}
