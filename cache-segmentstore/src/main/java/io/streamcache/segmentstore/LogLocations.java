package io.streamcache.segmentstore;

import io.streamcache.segmentstore.internal.log.LogRecordDescriptor;
import io.streamcache.segmentstore.internal.log.LogRecordListener;
import io.streamcache.segmentstore.internal.log.history.LogFileChannels;
import io.streamcache.segmentstore.internal.log.recovery.LocationIndex;
import io.streamcache.segmentstore.internal.log.recovery.LocationMemory;
import io.streamcache.segmentstore.internal.log.recovery.RecoveredLog;
import io.streamcache.segmentstore.internal.log.recovery.RecoveredSegment;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * With a log: where each live segment's bytes are in the log files, a {@link LocationIndex} per
 * segment id (one entry per DATA record). Recovery hands over the indexes it rebuilt from the
 * record headers ({@link #adopt}); from then on the writer's listener ({@link #feed}) follows the
 * records as they become durable, before their appends commit. {@link ReadThrough} looks the
 * indexes up to load what is not cached.
 *
 * <h2>Table by id</h2>
 * Segment ids are small ints handed out in increasing order by the store and never reused, so
 * the indexes are held in a table indexed by id, in pages of {@link #PAGE_IDS} references: a
 * directory (one reference per page) grows by copying, a page is made when its first id is
 * put and dropped when its last one is removed (ids only grow, so the pages of old ids empty out).
 * <pre>
 *  directory (volatile, grows by doubling)     page p (1024 references)
 *  +--------+--------+--------+-----           +-------+-------+-----+-------+
 *  | page 0 | null   | page 2 | ...   --------&gt;| id    | id+1  | ... | null  |  id = p * 1024 + slot
 *  +--------+--------+--------+-----           +-------+-------+-----+-------+
 * </pre>
 * Heap per live segment: a reference in its page (4 bytes with compressed references, at most
 * 4 KB per page of 1024 ids while any of them lives) plus the index's handle
 * ({@link LocationIndex#HEAP_BYTES}); the index's contents are off-heap, in one
 * {@link LocationMemory} per log (metadata of the log, outside the cache's memory bound;
 * {@link #reservedBytes()}).
 *
 * <p><b>Threading:</b> thread-safe. Lookups ({@link #get}: the feed per DATA record on the
 * writer's thread, readers on any thread) take no lock: an acquire read of the directory, of
 * the page and of the slot. Puts and removes (the writer's thread: CREATE, DELETE, a dropped
 * index; {@link #adopt} before the writer starts; {@link #close}) hold the table's write monitor,
 * uncontended in practice. The indexes are thread-safe themselves (each its own monitor) and used
 * outside the table; an index removed while a reader holds it is {@link LocationIndex#clear()
 * cleared} under its monitor, so the reader then finds nothing.
 *
 * <p><b>Lifetime:</b> {@link #close()} (after the writer stopped) clears every index the table
 * holds and gives the memory back to the system; an index obtained before then finds nothing.
 */
final class LogLocations implements AutoCloseable {
    /** Ids per page of the table. */
    static final int PAGE_IDS = 1 << 10;
    private static final int PAGE_SHIFT = 10;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(LocationIndex[].class);
    private static final VarHandle PAGES = MethodHandles.arrayElementVarHandle(LocationIndex[][].class);

    /** The directory of pages; its elements read with acquire, written with release. */
    private volatile LocationIndex[][] pages = new LocationIndex[0][];
    /** Live indexes per page; guarded by {@link #writeLock}. */
    private int[] livePerPage = new int[0];
    private final Object writeLock = new Object();
    /** The memory of the indexes made here and of those recovery built for this store. */
    private final LocationMemory memory = new LocationMemory();
    /** Other memories of adopted indexes (a recovery hook that scanned on its own); closed with this one. */
    private final List<LocationMemory> adoptedMemories = new ArrayList<>();
    private boolean closed;

    /** @return the memory in which recovery builds the indexes it hands to {@link #adopt}. */
    LocationMemory memory() {
        return memory;
    }

    /** @return bytes of direct memory the indexes' memory holds (0 once closed). */
    long reservedBytes() {
        synchronized (writeLock) {
            long bytes = memory.reservedBytes();
            for (final LocationMemory other : adoptedMemories) {
                bytes += other.reservedBytes();
            }
            return bytes;
        }
    }

    /**
     * @return the segment's location index, or null (no log records of it are known: recovered by
     *         a custom recovery hook, or an index dropped after it could not take a record). Lock-free.
     */
    LocationIndex get(final int segmentId) {
        if (segmentId < 0) {
            return null;
        }
        final LocationIndex[][] directory = pages;
        final int p = segmentId >>> PAGE_SHIFT;
        if (p >= directory.length) {
            return null;
        }
        final LocationIndex[] page = (LocationIndex[]) PAGES.getAcquire(directory, p);
        return page == null ? null : (LocationIndex) SLOTS.getAcquire(page, segmentId & (PAGE_IDS - 1));
    }

    /** Puts (or replaces, clearing the one it held) the index of a segment. */
    private void put(final int segmentId, final LocationIndex index) {
        if (segmentId < 0) {
            throw new IllegalArgumentException("segmentId=" + segmentId + " must be >= 0");
        }
        synchronized (writeLock) {
            if (closed) {
                index.clear();
                return;
            }
            final int p = segmentId >>> PAGE_SHIFT;
            LocationIndex[][] directory = pages;
            if (p >= directory.length) {
                final int length = Math.max(p + 1, 2 * directory.length);
                final LocationIndex[][] grown = new LocationIndex[length][];
                for (int i = 0; i < directory.length; i++) {
                    grown[i] = (LocationIndex[]) PAGES.getAcquire(directory, i);
                }
                livePerPage = Arrays.copyOf(livePerPage, length);
                pages = grown;
                directory = grown;
            }
            LocationIndex[] page = (LocationIndex[]) PAGES.getAcquire(directory, p);
            if (page == null) {
                page = new LocationIndex[PAGE_IDS];
                PAGES.setRelease(directory, p, page);
            }
            final int slot = segmentId & (PAGE_IDS - 1);
            final LocationIndex old = (LocationIndex) SLOTS.getAcquire(page, slot);
            SLOTS.setRelease(page, slot, index);
            if (old == null) {
                livePerPage[p]++;
            } else if (old != index) {
                old.clear();
            }
        }
    }

    /** Removes a segment's index (not cleared: the caller does). */
    private LocationIndex remove(final int segmentId) {
        synchronized (writeLock) {
            final LocationIndex[][] directory = pages;
            final int p = segmentId >>> PAGE_SHIFT;
            if (segmentId < 0 || p >= directory.length) {
                return null;
            }
            final LocationIndex[] page = (LocationIndex[]) PAGES.getAcquire(directory, p);
            if (page == null) {
                return null;
            }
            final int slot = segmentId & (PAGE_IDS - 1);
            final LocationIndex old = (LocationIndex) SLOTS.getAcquire(page, slot);
            if (old != null) {
                SLOTS.setRelease(page, slot, null);
                if (--livePerPage[p] == 0) {
                    PAGES.setRelease(directory, p, null);
                }
            }
            return old;
        }
    }

    /** @return pages of the table held now (tests). */
    int pageCount() {
        final LocationIndex[][] directory = pages;
        int count = 0;
        for (int i = 0; i < directory.length; i++) {
            if (PAGES.getAcquire(directory, i) != null) {
                count++;
            }
        }
        return count;
    }

    /**
     * Takes the location indexes of recovery's live segments, without consulting the store's
     * table: {@link LogOpening} runs this on a helper thread while {@link SegmentTable#restore}
     * restores the same segments from the same {@link RecoveredLog} (its live segments, each with
     * a distinct id), so it takes exactly what {@link #adopt} would take after the restore. A
     * restore that fails fails the open, and the store's close of this table gives them back.
     */
    void adoptLive(final List<RecoveredSegment> live) {
        LocationMemory last = memory;
        for (final RecoveredSegment segment : live) {
            final LocationIndex index = segment.locations();
            final LocationMemory other = index.memory();
            if (other != last) {
                synchronized (writeLock) {
                    if (other != memory && adoptedMemories.stream().noneMatch(m -> m == other)) {
                        adoptedMemories.add(other);
                    }
                }
                last = other;
            }
            put(segment.id(), index);
        }
    }

    /**
     * Takes the indexes recovery rebuilt, of the segments the table holds; clears the others
     * (they would hold memory until close).
     */
    void adopt(final Map<Integer, LocationIndex> recovered, final SegmentTable table) {
        recovered.forEach((id, index) -> {
            if (table.segmentById(id) != null) {
                synchronized (writeLock) {
                    final LocationMemory other = index.memory();
                    if (other != memory && adoptedMemories.stream().noneMatch(m -> m == other)) {
                        adoptedMemories.add(other);
                    }
                }
                put(id, index);
            } else {
                index.clear();
            }
        });
    }

    /**
     * Clears every index held and gives the memory back: after the writer stopped (its feed then
     * drops what it is given). Idempotent.
     */
    @Override
    public void close() {
        synchronized (writeLock) {
            if (closed) {
                return;
            }
            closed = true;
            final LocationIndex[][] directory = pages;
            for (int p = 0; p < directory.length; p++) {
                final LocationIndex[] page = (LocationIndex[]) PAGES.getAcquire(directory, p);
                if (page == null) {
                    continue;
                }
                for (int slot = 0; slot < PAGE_IDS; slot++) {
                    final LocationIndex index = (LocationIndex) SLOTS.getAcquire(page, slot);
                    if (index != null) {
                        index.clear();
                    }
                }
            }
            pages = new LocationIndex[0][];
            livePerPage = new int[0];
            memory.close();
            for (final LocationMemory other : adoptedMemories) {
                other.close();
            }
        }
    }

    /** Removes and clears a segment's index: it could not take a record. */
    private void drop(final int segmentId) {
        final LocationIndex index = remove(segmentId);
        if (index != null) {
            index.clear();
        }
    }

    /**
     * @param next     the builder's listener, told of everything after the indexes.
     * @param table    forgets a segment's id once its DELETE is durable.
     * @param channels the historical reader's channels: a retired file's is closed.
     * @return the writer's listener.
     */
    LogRecordListener feed(final LogRecordListener next, final SegmentTable table, final LogFileChannels channels) {
        return new LocationFeed(next, table, channels);
    }

    /**
     * Follows the records as they become durable into the location indexes (before their
     * requests commit, on the writer's thread), closes the read channel of a retired file, and
     * passes everything on to the listener given to the builder. Never throws: an index that
     * cannot take a record is dropped (its segment's evicted bytes then stay NOT_CACHED).
     */
    private final class LocationFeed implements LogRecordListener {
        private final LogRecordListener next;
        private final SegmentTable table;
        private final LogFileChannels logChannels;

        LocationFeed(final LogRecordListener next, final SegmentTable table, final LogFileChannels logChannels) {
            this.next = next;
            this.table = table;
            this.logChannels = logChannels;
        }

        @Override
        public void onRecord(final byte type, final int segmentId, final long segmentOffset, final int length,
                             final long fileNumber, final long position) {
            try {
                switch (type) {
                    case LogRecordDescriptor.TYPE_CREATE -> put(segmentId, new LocationIndex(0, memory));
                    case LogRecordDescriptor.TYPE_DATA -> {
                        final LocationIndex index = get(segmentId);
                        if (index != null) {
                            index.add(segmentOffset, length, fileNumber, position);
                        }
                    }
                    case LogRecordDescriptor.TYPE_TRUNCATE -> {
                        final LocationIndex index = get(segmentId);
                        if (index != null) {
                            index.truncate(segmentOffset);
                        }
                    }
                    case LogRecordDescriptor.TYPE_DELETE -> {
                        final LocationIndex index = remove(segmentId);
                        if (index != null) {
                            index.clear();
                        }
                        table.forgetId(segmentId);
                    }
                    default -> {
                    }
                }
            } catch (final RuntimeException | OutOfMemoryError e) {
                // OutOfMemoryError: direct memory for the index ran out; the log goes on without it.
                drop(segmentId);
            }
            next.onRecord(type, segmentId, segmentOffset, length, fileNumber, position);
        }

        @Override
        public void onCopy(final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                           final long position) {
            try {
                final LocationIndex index = get(segmentId);
                if (index != null) {
                    index.relocate(segmentOffset, length, fileNumber, position);
                }
            } catch (final RuntimeException | OutOfMemoryError e) {
                // OutOfMemoryError: direct memory for the index ran out; the log goes on without it.
                drop(segmentId);
            }
            next.onCopy(segmentId, segmentOffset, length, fileNumber, position);
        }

        @Override
        public void onFileRetired(final long fileNumber) {
            try {
                logChannels.close(fileNumber);
            } catch (final IOException e) {
                // A read-only channel: nothing to lose; the file goes anyway.
            }
            next.onFileRetired(fileNumber);
        }
    }
}
