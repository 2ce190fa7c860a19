package io.streamcache.bench.sim;

import java.util.Arrays;

/**
 * A workload as a sequence of events over blocks of segments: immutable once built (the
 * arrays are never written after {@link Builder#build}), so one trace may be replayed by many
 * simulations, from any thread.
 *
 * <p>Every block of every segment has a dense key (0..{@link #keyCount()}-1) for the reference
 * caches; the policies under test see the segment's name and the block's byte offset
 * ({@code block * }{@link #BLOCK_SIZE}). Readers are registered, moved and closed by the
 * workload as a broker would: a {@link #READ} event names its reader ({@code -1} for a
 * key/value access without one), which after the read is positioned at the end of the block.
 */
public final class Trace {
    /** Bytes per block: one read-index entry per cached block. */
    public static final int BLOCK_SIZE = 4096;

    /** A segment is created (its id is new). */
    public static final byte CREATE = 0;
    /** A block is appended to a segment (cached, not counted as a read). */
    public static final byte APPEND = 1;
    /** A block is read: a hit or a miss, a miss reads it into the cache. */
    public static final byte READ = 2;
    /** A reader is registered at a block of a segment (its position: the block's start). */
    public static final byte OPEN_READER = 3;
    /** A reader is closed. */
    public static final byte CLOSE_READER = 4;
    /** A segment is deleted: its blocks leave the cache. */
    public static final byte DELETE = 5;

    /** Reader class: a tail reader (follows the writer closely). */
    public static final byte TAIL = 0;
    /** Reader class: a catch-up reader (or a leader) reading history front to back. */
    public static final byte CATCHUP = 1;
    /** Reader class: a follower replaying a range behind another reader. */
    public static final byte FOLLOWER = 2;
    /** Reader class: anything else (short sessions at random places, key/value reads, reads without a reader). */
    public static final byte RANDOM = 3;
    /** The reader classes' names, by class. */
    public static final java.util.List<String> CLASS_NAMES = java.util.List.of("tail", "catch-up", "follower", "random");

    private final String name;
    private final String description;
    private final byte[] types;
    private final int[] segments;
    private final int[] blocks;
    private final int[] keys;
    private final int[] readers;
    private final int size;
    private final int segmentCount;
    private final int keyCount;
    private final int readerCount;
    private final byte[] readerClasses;
    private final int[][] segmentKeys;
    private final long[] cacheSizes;
    private final String sizeNote;
    private final boolean streaming;

    private Trace(final Builder b, final long[] cacheSizes, final String sizeNote) {
        this.name = b.name;
        this.description = b.description;
        this.size = b.size;
        this.types = Arrays.copyOf(b.types, size);
        this.segments = Arrays.copyOf(b.segments, size);
        this.blocks = Arrays.copyOf(b.blocks, size);
        this.keys = Arrays.copyOf(b.keys, size);
        this.readers = Arrays.copyOf(b.readers, size);
        this.segmentCount = b.segmentCount;
        this.keyCount = b.keyCount;
        this.readerCount = b.readerCount;
        this.readerClasses = Arrays.copyOf(b.readerClasses, b.readerCount);
        this.segmentKeys = new int[segmentCount][];
        for (int s = 0; s < segmentCount; s++) {
            segmentKeys[s] = Arrays.copyOf(b.segmentKeys[s], b.segmentLengths[s]);
        }
        this.cacheSizes = cacheSizes.clone();
        this.sizeNote = sizeNote;
        this.streaming = b.streaming;
    }

    public String name() {
        return name;
    }

    public String description() {
        return description;
    }

    /** @return whether this is a streaming workload (the reader-aware targets apply). */
    public boolean streaming() {
        return streaming;
    }

    public int size() {
        return size;
    }

    public byte type(final int i) {
        return types[i];
    }

    public int segment(final int i) {
        return segments[i];
    }

    public int block(final int i) {
        return blocks[i];
    }

    /** @return the block's dense key, or -1 for events that name no block. */
    public int key(final int i) {
        return keys[i];
    }

    /** @return the reader of a READ, OPEN_READER or CLOSE_READER event, else -1. */
    public int reader(final int i) {
        return readers[i];
    }

    public int segmentCount() {
        return segmentCount;
    }

    public int keyCount() {
        return keyCount;
    }

    public int readerCount() {
        return readerCount;
    }

    /** @return the class ({@link #TAIL} ... {@link #RANDOM}) of a READ event's reader; {@link #RANDOM} without one. */
    public byte readClass(final int i) {
        final int reader = readers[i];
        return reader < 0 ? RANDOM : readerClasses[reader];
    }

    /** @return the keys of a segment's blocks, by block (the array must not be changed). */
    int[] segmentKeys(final int segment) {
        return segmentKeys[segment];
    }

    /** @return the cache sizes (blocks) this workload is simulated at. */
    public long[] cacheSizes() {
        return cacheSizes.clone();
    }

    /** @return what the cache sizes are relative to, for the report. */
    public String sizeNote() {
        return sizeNote;
    }

    /** @return how many READ events the trace holds. */
    public long readCount() {
        long n = 0;
        for (int i = 0; i < size; i++) {
            if (types[i] == READ) {
                n++;
            }
        }
        return n;
    }

    /**
     * For each event, the index of the next event that uses the same block (APPEND or READ), or
     * {@link Integer#MAX_VALUE} if none (Belady's look-ahead).
     */
    int[] nextUses() {
        final int[] next = new int[size];
        final int[] seen = new int[keyCount];
        Arrays.fill(seen, Integer.MAX_VALUE);
        for (int i = size - 1; i >= 0; i--) {
            final int key = keys[i];
            if (types[i] == APPEND || types[i] == READ) {
                next[i] = seen[key];
                seen[key] = i;
            } else {
                next[i] = Integer.MAX_VALUE;
            }
        }
        return next;
    }

    /**
     * Builds a trace: not thread-safe. Segment ids, keys and reader ids are assigned densely in
     * the order the workload creates them.
     */
    public static final class Builder {
        private final String name;
        private final String description;
        private final boolean streaming;
        private byte[] types = new byte[1 << 16];
        private int[] segments = new int[1 << 16];
        private int[] blocks = new int[1 << 16];
        private int[] keys = new int[1 << 16];
        private int[] readers = new int[1 << 16];
        private int size;
        private int segmentCount;
        private int keyCount;
        private int readerCount;
        private byte[] readerClasses = new byte[16];
        private int[][] segmentKeys = new int[16][];
        private int[] segmentLengths = new int[16];
        private boolean[] deleted = new boolean[16];

        public Builder(final String name, final String description, final boolean streaming) {
            this.name = name;
            this.description = description;
            this.streaming = streaming;
        }

        /** @return a new segment's id. */
        public int createSegment() {
            final int segment = segmentCount++;
            if (segment == segmentKeys.length) {
                segmentKeys = Arrays.copyOf(segmentKeys, segment * 2);
                segmentLengths = Arrays.copyOf(segmentLengths, segment * 2);
                deleted = Arrays.copyOf(deleted, segment * 2);
            }
            segmentKeys[segment] = new int[16];
            add(CREATE, segment, -1, -1, -1);
            return segment;
        }

        /** @return how many blocks the segment holds. */
        public int length(final int segment) {
            return segmentLengths[segment];
        }

        /** Appends the next block to a segment. */
        public void append(final int segment) {
            checkLive(segment);
            final int block = segmentLengths[segment];
            add(APPEND, segment, block, keyOf(segment, block), -1);
        }

        /**
         * Reads a block; for key/value traces, reading a block past the segment's length first
         * gives every block up to it a key (no event).
         *
         * @param reader the reader, or -1.
         */
        public void read(final int segment, final int block, final int reader) {
            checkLive(segment);
            add(READ, segment, block, keyOf(segment, block), reader);
        }

        /** @return a new reader of class {@link #RANDOM}, registered at the start of {@code block}. */
        public int openReader(final int segment, final int block) {
            return openReader(segment, block, RANDOM);
        }

        /** @return a new reader of the class, registered at the start of {@code block}. */
        public int openReader(final int segment, final int block, final byte readerClass) {
            checkLive(segment);
            final int reader = readerCount++;
            if (reader == readerClasses.length) {
                readerClasses = Arrays.copyOf(readerClasses, reader * 2);
            }
            readerClasses[reader] = readerClass;
            add(OPEN_READER, segment, block, -1, reader);
            return reader;
        }

        public void closeReader(final int segment, final int reader) {
            add(CLOSE_READER, segment, -1, -1, reader);
        }

        /** Deletes a segment; the workload closes its readers first. */
        public void deleteSegment(final int segment) {
            checkLive(segment);
            deleted[segment] = true;
            add(DELETE, segment, -1, -1, -1);
        }

        public int events() {
            return size;
        }

        /** @return distinct blocks so far. */
        public int keyCount() {
            return keyCount;
        }

        /**
         * @param cacheSizes the sizes to simulate, in blocks.
         * @param sizeNote   what they are relative to.
         */
        public Trace build(final long[] cacheSizes, final String sizeNote) {
            return new Trace(this, cacheSizes, sizeNote);
        }

        private int keyOf(final int segment, final int block) {
            int[] segKeys = segmentKeys[segment];
            while (segmentLengths[segment] <= block) {
                if (segmentLengths[segment] == segKeys.length) {
                    segKeys = Arrays.copyOf(segKeys, segKeys.length * 2);
                    segmentKeys[segment] = segKeys;
                }
                segKeys[segmentLengths[segment]++] = keyCount++;
            }
            return segKeys[block];
        }

        private void checkLive(final int segment) {
            if (segment < 0 || segment >= segmentCount || deleted[segment]) {
                throw new IllegalArgumentException("segment " + segment + " does not exist");
            }
        }

        private void add(final byte type, final int segment, final int block, final int key, final int reader) {
            if (size == types.length) {
                final int n = size * 2;
                types = Arrays.copyOf(types, n);
                segments = Arrays.copyOf(segments, n);
                blocks = Arrays.copyOf(blocks, n);
                keys = Arrays.copyOf(keys, n);
                readers = Arrays.copyOf(readers, n);
            }
            types[size] = type;
            segments[size] = segment;
            blocks[size] = block;
            keys[size] = key;
            readers[size] = reader;
            size++;
        }
    }
}
