package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderAwarePolicy.Reader;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The registered readers of every segment, as {@link ReaderAwarePolicy} knows them: one
 * {@link SegmentReaders} per segment (its readers, its tail, its history of re-reads) and the
 * re-read sessions that ended since the last pass.
 *
 * <h2>Threading</h2>
 * {@link #register}, {@link #forget}, {@link #readerCount} and {@link Reader#close()}: any thread,
 * at any time (a broker calls them when a client opens or ends a read); they allocate and
 * synchronize on the segment's reader set, never on the data path of other segments. A reader
 * set's array of readers is copied on change under the set's monitor and read without it (a
 * volatile read). The policy's pass reads the sets and drains {@link #endedSessions}; it writes
 * the fields marked as confined to the pass, and removes stale sets under their monitor.
 */
final class ReaderRegistry {
    final ConcurrentHashMap<String, SegmentReaders> segments = new ConcurrentHashMap<>();
    /** Re-read sessions that ended since the last pass: (start distance, bytes read). */
    final ConcurrentLinkedQueue<long[]> endedSessions = new ConcurrentLinkedQueue<>();
    /** The generation of the latest pass; read by registering threads. */
    volatile int latestGeneration;

    /**
     * Registers a reader of a segment (see {@link ReaderAwarePolicy#register}).
     *
     * @param segment  the segment's name.
     * @param position the next byte the reader will read, &gt;= 0.
     * @return the reader's handle.
     */
    Reader register(final String segment, final long position) {
        Objects.requireNonNull(segment, "segment");
        ReaderAwarePolicy.checkPosition(position);
        while (true) {
            final SegmentReaders set = segments.computeIfAbsent(segment, name -> new SegmentReaders(this, name));
            synchronized (set) {
                if (set.removed) {
                    continue;
                }
                long reached = set.frontier;
                for (final Reader other : set.readers) {
                    reached = Math.max(reached, other.position());
                }
                final long tail = Math.max(reached, set.tail);
                final boolean reread = position < tail;
                final Reader reader = new Reader(set, position, reread ? tail - position : 0, reread);
                if (position < reached) {
                    set.rereadGeneration = latestGeneration;
                    set.reread = true;
                }
                if (reread) {
                    set.pendingRereads++;
                }
                final Reader[] readers = Arrays.copyOf(set.readers, set.readers.length + 1);
                readers[readers.length - 1] = reader;
                set.readers = readers;
                return reader;
            }
        }
    }

    /**
     * Forgets a deleted segment (see {@link ReaderAwarePolicy#forget}).
     */
    void forget(final String segment) {
        final SegmentReaders set = segments.remove(segment);
        if (set != null) {
            synchronized (set) {
                set.removed = true;
                for (final Reader reader : set.readers) {
                    reader.forgotten();
                }
                set.readers = new Reader[0];
            }
        }
    }

    /**
     * @return how many open readers the segment has now.
     */
    int readerCount(final String segment) {
        final SegmentReaders set = segments.get(segment);
        return set == null ? 0 : set.readers.length;
    }

    /**
     * @return the segment's reader set, created if the registry has none (a segment the policy
     *         surveys before anyone registered a reader of it).
     */
    SegmentReaders readersOf(final String segment) {
        return segments.computeIfAbsent(segment, name -> new SegmentReaders(this, name));
    }

    /**
     * What the policy knows of one segment: its readers (the array is copied on change, under the
     * set's monitor), its tail as far as seen, and its history of re-reads.
     */
    static final class SegmentReaders {
        final String segment;
        volatile Reader[] readers = new Reader[0];
        /** The farthest position a closed reader reached; under the monitor. */
        long frontier;
        volatile boolean reread;
        volatile int rereadGeneration;
        /** Set when the set left the map; registering threads retry with a new set. */
        boolean removed;
        /** Re-read registrations since the last pass; under the monitor. */
        int pendingRereads;
        /** The farthest entry end a pass surveyed: the tail as far as the policy knows; written by the pass. */
        volatile long tail;
        // Confined to the pass.
        boolean learned;
        double count;
        int bucket;
        int lengthBucket;
        int seenGeneration;

        final ReaderRegistry registry;

        SegmentReaders(final ReaderRegistry registry, final String segment) {
            this.registry = registry;
            this.segment = segment;
        }
    }
}
