package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogRecordDescriptor;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * One valid record as a {@link LogScanner} reports it: a flyweight reused for every record of a
 * scan, valid only during {@link LogRecordVisitor#onRecord}; confined to the scanning thread.
 * The fields mean what {@link LogRecordDescriptor} says they mean for the record's type.
 */
public final class LogRecordView {
    private final UnsafeBuffer payload = new UnsafeBuffer(0, 0);
    private long fileNumber;
    private long position;
    private byte type;
    private int segmentId;
    private long segmentOffset;
    private int length;
    private byte flags;
    private boolean payloadLoaded;

    LogRecordView() {
    }

    void set(final long fileNumber, final long position, final byte type, final int segmentId, final long segmentOffset,
             final int length) {
        this.fileNumber = fileNumber;
        this.position = position;
        this.type = type;
        this.segmentId = segmentId;
        this.segmentOffset = segmentOffset;
        this.length = length;
        this.flags = 0;
        this.payloadLoaded = false;
    }

    void flags(final byte flags) {
        this.flags = flags;
    }

    /**
     * @return the FLAGS field: 0, or {@link LogRecordDescriptor#FLAG_COPY} on a DATA record
     *         compaction copied.
     */
    public byte flags() {
        return flags;
    }

    /**
     * @return whether this is a DATA record compaction copied ({@link LogRecordDescriptor#FLAG_COPY}).
     */
    public boolean isCopy() {
        return type == LogRecordDescriptor.TYPE_DATA && (flags & LogRecordDescriptor.FLAG_COPY) != 0;
    }

    void payload(final ByteBuffer buffer, final int index) {
        payload.wrap(buffer, index, length);
        payloadLoaded = true;
    }

    /**
     * @return the number of the file the record is in (its CRC's seed).
     */
    public long fileNumber() {
        return fileNumber;
    }

    /**
     * @return the record's position in its file (8-byte aligned).
     */
    public long position() {
        return position;
    }

    /**
     * @return one of the {@code LogRecordDescriptor.TYPE_*} constants other than padding.
     */
    public byte type() {
        return type;
    }

    /**
     * @return the SEGMENT_ID field (0 for a SNAPSHOT).
     */
    public int segmentId() {
        return segmentId;
    }

    /**
     * @return the SEGMENT_OFFSET field: the offset of payload byte 0 (DATA), the final length
     *         (SEAL), the new start offset (TRUNCATE), 0 otherwise.
     */
    public long segmentOffset() {
        return segmentOffset;
    }

    /**
     * @return the payload's length (the LENGTH field).
     */
    public int length() {
        return length;
    }

    /**
     * @return where the payload starts in the file.
     */
    public long payloadPosition() {
        return position + LogRecordDescriptor.HEADER_LENGTH;
    }

    /**
     * @return the bytes the record occupies in the file: the next record starts this far on.
     */
    public int alignedLength() {
        return LogRecordDescriptor.alignedLength(length);
    }

    /**
     * @return whether {@link #payload()} is available: always for records that fit the scanner's
     *         buffer and for CREATE and SNAPSHOT records; not for a DATA record longer than it.
     */
    public boolean hasPayload() {
        return payloadLoaded;
    }

    /**
     * @return the payload, a view of the scanner's buffer valid only during the callback.
     * @throws IllegalStateException if {@link #hasPayload()} is false.
     */
    public DirectBuffer payload() {
        if (!payloadLoaded) {
            throw new IllegalStateException("payload of the record at position=" + position + " length=" + length
                + " was not loaded: longer than the scanner's buffer");
        }
        return payload;
    }

    /**
     * @return the payload decoded as UTF-8 (a CREATE record's name); allocates.
     */
    public String payloadAsString() {
        final byte[] bytes = new byte[length];
        payload().getBytes(0, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "LogRecordView{fileNumber=" + fileNumber + ", position=" + position + ", type=" + type + ", segmentId="
            + segmentId + ", segmentOffset=" + segmentOffset + ", length=" + length + '}';
    }
}
