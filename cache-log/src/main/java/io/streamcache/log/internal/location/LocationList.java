package io.streamcache.log.internal.location;

import java.util.Arrays;

/**
 * The locations of the DATA records that hold a range of one segment, confined to one thread at
 * a time: what {@link LocationIndex#locate} copies out, in offset order. Reusable: its arrays
 * grow and stay.
 */
public final class LocationList {
    private long from;
    private long to;
    private int count;
    private long[] offsets = new long[16];
    private int[] lengths = new int[16];
    private long[] fileNumbers = new long[16];
    private long[] positions = new long[16];

    void reset(final long from, final long to) {
        this.from = from;
        this.to = to;
        this.count = 0;
    }

    void add(final long offset, final int length, final long fileNumber, final long position) {
        if (count == offsets.length) {
            final int capacity = count + (count >> 1);
            offsets = Arrays.copyOf(offsets, capacity);
            lengths = Arrays.copyOf(lengths, capacity);
            fileNumbers = Arrays.copyOf(fileNumbers, capacity);
            positions = Arrays.copyOf(positions, capacity);
        }
        offsets[count] = offset;
        lengths[count] = length;
        fileNumbers[count] = fileNumber;
        positions[count] = position;
        count++;
    }

    /**
     * @return the first offset of the range asked for, clipped to the index's start offset.
     */
    public long from() {
        return from;
    }

    /**
     * @return the end of the range asked for, clipped to the index's end offset.
     */
    public long to() {
        return to;
    }

    /**
     * @return records listed: those overlapping {@code [from(), to())}.
     */
    public int count() {
        return count;
    }

    /**
     * @return segment offset of record {@code i}'s payload byte 0 (may be before {@link #from()}).
     */
    public long offset(final int i) {
        return offsets[checkIndex(i)];
    }

    /**
     * @return payload length of record {@code i}.
     */
    public int length(final int i) {
        return lengths[checkIndex(i)];
    }

    /**
     * @return number of the file holding record {@code i}.
     */
    public long fileNumber(final int i) {
        return fileNumbers[checkIndex(i)];
    }

    /**
     * @return position of record {@code i} (its header) in its file.
     */
    public long position(final int i) {
        return positions[checkIndex(i)];
    }

    private int checkIndex(final int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("i=" + i + " count=" + count);
        }
        return i;
    }

    @Override
    public String toString() {
        return "LocationList{from=" + from + ", to=" + to + ", count=" + count + '}';
    }
}
