package io.streamcache.log.internal.recovery;

/**
 * Per file replayed: each segment with DATA in it (the state object: a segment deleted and
 * created again under its id is another one) and the end offset of its last DATA there. Two
 * parallel arrays and a back-reference in the segment's state, instead of an identity map
 * per file: no entry object or boxing per segment and file. Filled by one thread (the replay's,
 * or one lane's: {@link LogReplay#applyPartitioned}), read after.
 */
final class FileEnds {
    private SegmentState[] segments;
    private long[] ends;
    private int size;

    FileEnds() {
        this(64);
    }

    /** @param capacity entries to hold before growing (a checkpoint knows how many). */
    FileEnds(final int capacity) {
        segments = new SegmentState[Math.max(1, capacity)];
        ends = new long[Math.max(1, capacity)];
    }

    void note(final SegmentState segment, final long end) {
        if (segment.endsIn == this) {
            ends[segment.endsIndex] = Math.max(ends[segment.endsIndex], end);
            return;
        }
        if (size == segments.length) {
            segments = java.util.Arrays.copyOf(segments, size * 2);
            ends = java.util.Arrays.copyOf(ends, size * 2);
        }
        segment.endsIn = this;
        segment.endsIndex = size;
        segments[size] = segment;
        ends[size++] = end;
    }

    /**
     * Takes the entries of {@code other}, a lane's ends of this file, by copying its arrays
     * without touching the segments (no miss per segment). Only for lanes applied to a file
     * whose ends were empty before them: the lanes' segments are disjoint, so no segment is
     * here twice. Their back-references keep pointing at {@code other}, which is emptied:
     * a later file's ends (a new object) still note them afresh, and no record of this file
     * is applied after the lanes.
     */
    void appendDisjoint(final FileEnds other) {
        if (segments.length < size + other.size) {
            segments = java.util.Arrays.copyOf(segments, size + other.size);
            ends = java.util.Arrays.copyOf(ends, size + other.size);
        }
        System.arraycopy(other.segments, 0, segments, size, other.size);
        System.arraycopy(other.ends, 0, ends, size, other.size);
        size += other.size;
        other.segments = new SegmentState[0];
        other.ends = new long[0];
        other.size = 0;
    }

    int size() {
        return size;
    }

    SegmentState segment(final int i) {
        return segments[i];
    }

    long end(final int i) {
        return ends[i];
    }
}
