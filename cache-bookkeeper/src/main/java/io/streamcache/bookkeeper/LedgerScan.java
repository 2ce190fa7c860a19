package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentStore;

import java.io.IOException;

/**
 * Rebuilds a ledger's {@link LedgerState} from its segment at start: one sequential pass over the
 * records ({@link LedgerRecords}), reading each record's header and, for entries, the ids and LAC
 * that follow it (the payloads are skipped: the store's read-ahead brings them in by 1 MiB ranges,
 * and the cache keeps what fits). Stateless, thread-safe; one call scans one ledger.
 *
 * <p>The store recovers its log first (every append it completed is in its segment, none is
 * torn: appends are all or nothing), so a record that does not parse is corruption, reported
 * as an {@link IOException} naming the ledger and the offset.
 */
final class LedgerScan {

    private static final int MAX_PEEK = LedgerRecords.HEADER_LENGTH + LedgerRecords.ENTRY_PREFIX_LENGTH;

    private LedgerScan() {
    }

    static LedgerState scan(final SegmentStore store, final String segment, final long ledgerId) throws IOException {
        final SegmentInfo info = store.info(segment);
        final LedgerState state = new LedgerState(ledgerId, segment, info.length());
        final ByteBuf peek = Unpooled.buffer(MAX_PEEK);
        long offset = info.startOffset();
        final long end = info.length();
        while (offset < end) {
            if (end - offset < LedgerRecords.HEADER_LENGTH) {
                throw corrupt(ledgerId, segment, offset, "a record header is cut by the segment's end=" + end);
            }
            peek.clear();
            SegmentReads.readFully(store, segment, offset, (int) Math.min(MAX_PEEK, end - offset), peek);
            final byte type = peek.getByte(LedgerRecords.TYPE_OFFSET);
            final int length = peek.getInt(LedgerRecords.LENGTH_OFFSET);
            final long payload = offset + LedgerRecords.HEADER_LENGTH;
            if (length < 0 || payload + length > end) {
                throw corrupt(ledgerId, segment, offset, "record length=" + length + " runs past the segment's end=" + end);
            }
            switch (type) {
                case LedgerRecords.TYPE_ENTRY -> {
                    if (length < LedgerRecords.ENTRY_PREFIX_LENGTH) {
                        throw corrupt(ledgerId, segment, offset, "entry length=" + length + " is shorter than its ids");
                    }
                    final long entryId = peek.getLong(LedgerRecords.HEADER_LENGTH + LedgerRecords.ENTRY_ID_OFFSET);
                    final long lac = peek.getLong(LedgerRecords.HEADER_LENGTH + LedgerRecords.ENTRY_LAC_OFFSET);
                    state.putLocation(entryId, LedgerRecords.location(payload, length));
                    state.raiseLac(lac);
                }
                case LedgerRecords.TYPE_MASTER_KEY -> {
                    final ByteBuf key = Unpooled.buffer(length);
                    SegmentReads.readFully(store, segment, payload, length, key);
                    state.masterKey(key.array());
                }
                case LedgerRecords.TYPE_FENCED -> state.fenced(true);
                case LedgerRecords.TYPE_LIMBO -> {
                    if (length != 1) {
                        throw corrupt(ledgerId, segment, offset, "limbo record length=" + length + ", expected 1");
                    }
                    state.limbo(peek.getByte(LedgerRecords.HEADER_LENGTH) != 0);
                }
                case LedgerRecords.TYPE_EXPLICIT_LAC -> {
                    final ByteBuf lac = Unpooled.buffer(length);
                    SegmentReads.readFully(store, segment, payload, length, lac);
                    state.explicitLac(lac.array());
                    if (length >= LedgerRecords.EXPLICIT_LAC_VALUE_OFFSET + Long.BYTES) {
                        state.raiseLac(lac.getLong(LedgerRecords.EXPLICIT_LAC_VALUE_OFFSET));
                    }
                }
                default -> throw corrupt(ledgerId, segment, offset, "unknown record type=" + type);
            }
            offset = payload + length;
        }
        return state;
    }

    private static IOException corrupt(final long ledgerId, final String segment, final long offset, final String what) {
        return new IOException("ledger=" + ledgerId + " segment=" + segment + " offset=" + offset + ": " + what);
    }
}
