package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The records a ledger's segment holds, and the packed location its entry index keeps per entry:
 * stateless, thread-safe.
 *
 * <p>A ledger is one segment of the durable {@code SegmentStore}; everything the bookie tells the
 * storage about the ledger is appended to it as a record, in the order it was told, so that one
 * sequential scan of the segment at start rebuilds the ledger's state:
 * <pre>
 *  record:
 *  +---------+--------------------+---------------------------------------------+
 *  | type    | payload length     | payload                                     |
 *  | 1 byte  | 4 bytes, unsigned  | ENTRY:        the bookie's entry as given:  |
 *  |         | big-endian         |               ledgerId(8) entryId(8) LAC(8) |
 *  |         |                    |               digest, data                  |
 *  |         |                    | MASTER_KEY:   the key's bytes               |
 *  |         |                    | FENCED:       nothing                       |
 *  |         |                    | LIMBO:        1 byte, 1 = set, 0 = cleared  |
 *  |         |                    | EXPLICIT_LAC: the explicit LAC as given     |
 *  +---------+--------------------+---------------------------------------------+
 *  0         1                    5 (HEADER_LENGTH)
 *
 *  entry location (one long per entry in the ledger's index):
 *  63                          24 23                     0
 *  +-----------------------------+-----------------------+
 *  | segment offset of the       | payload length        |
 *  | entry's payload (40 bits)   | (24 bits, < 16 MiB)   |
 *  +-----------------------------+-----------------------+
 * </pre>
 * The store's segment offsets are this storage's only addresses: its log keeps them valid
 * across restarts and compaction, so the index needs no rewrite when the log moves bytes.
 */
final class LedgerRecords {

    static final byte TYPE_ENTRY = 1;
    static final byte TYPE_MASTER_KEY = 2;
    static final byte TYPE_FENCED = 3;
    static final byte TYPE_LIMBO = 4;
    static final byte TYPE_EXPLICIT_LAC = 5;

    static final int TYPE_OFFSET = 0;
    static final int LENGTH_OFFSET = 1;
    static final int HEADER_LENGTH = 5;

    /** Bytes of an ENTRY payload that recovery reads: ledger id, entry id, LAC. */
    static final int ENTRY_PREFIX_LENGTH = 3 * Long.BYTES;
    static final int ENTRY_ID_OFFSET = Long.BYTES;
    static final int ENTRY_LAC_OFFSET = 2 * Long.BYTES;
    /** The explicit LAC's value follows the ledger id in its payload. */
    static final int EXPLICIT_LAC_VALUE_OFFSET = Long.BYTES;

    static final int LOCATION_LENGTH_BITS = 24;
    static final long LOCATION_LENGTH_MASK = (1L << LOCATION_LENGTH_BITS) - 1;
    static final int LOCATION_OFFSET_SHIFT = LOCATION_LENGTH_BITS;
    static final int LOCATION_OFFSET_BITS = Long.SIZE - LOCATION_LENGTH_BITS;
    static final long MAX_SEGMENT_OFFSET = (1L << LOCATION_OFFSET_BITS) - 1;
    /** The largest entry a ledger accepts: what the location's length field holds. */
    static final int MAX_ENTRY_LENGTH = (int) LOCATION_LENGTH_MASK;

    private LedgerRecords() {
    }

    /**
     * @return a new buffer from {@code allocator} holding one record: the header and a copy of
     *         {@code payload}'s readable bytes ({@code payload} is not changed).
     */
    static ByteBuf record(final ByteBufAllocator allocator, final byte type, final ByteBuf payload) {
        final int length = payload.readableBytes();
        final ByteBuf record = allocator.directBuffer(HEADER_LENGTH + length);
        record.writeByte(type);
        record.writeInt(length);
        record.writeBytes(payload, payload.readerIndex(), length);
        return record;
    }

    /**
     * @return a new buffer from {@code allocator} holding one record with {@code payload}.
     */
    static ByteBuf record(final ByteBufAllocator allocator, final byte type, final byte[] payload) {
        final ByteBuf record = allocator.heapBuffer(HEADER_LENGTH + payload.length);
        record.writeByte(type);
        record.writeInt(payload.length);
        record.writeBytes(payload);
        return record;
    }

    /**
     * @param payloadOffset the segment offset of an entry's payload (past its header).
     * @param length        the payload's length.
     * @return the packed location.
     * @throws IllegalArgumentException if either does not fit its field.
     */
    static long location(final long payloadOffset, final int length) {
        if (payloadOffset < 0 || payloadOffset > MAX_SEGMENT_OFFSET) {
            throw new IllegalArgumentException("payloadOffset=" + payloadOffset + " is outside [0, " + MAX_SEGMENT_OFFSET + "]");
        }
        if (length < 0 || length > MAX_ENTRY_LENGTH) {
            throw new IllegalArgumentException("length=" + length + " is outside [0, " + MAX_ENTRY_LENGTH + "]");
        }
        return payloadOffset << LOCATION_OFFSET_SHIFT | length;
    }

    static long locationOffset(final long location) {
        return location >>> LOCATION_OFFSET_SHIFT;
    }

    static int locationLength(final long location) {
        return (int) (location & LOCATION_LENGTH_MASK);
    }
}
