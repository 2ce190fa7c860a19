package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@link LedgerState}: its entry index (dense ids in an array, far ones in a map) and its queue of
 * entries in flight (order, growth, removal out of order, latest copy wins, references).
 */
class LedgerStateTest {

    @Test
    void shouldIndexDenseStripedAndFarEntryIdsAlike() {
        final LedgerState state = new LedgerState(1, "ledger-1", 0);
        final java.util.TreeMap<Long, Long> expected = new java.util.TreeMap<>();
        // Striped: every third id missing, across several doublings of the array.
        for (long id = 0; id < 5000; id++) {
            if (id % 3 != 1) {
                state.putLocation(id, LedgerRecords.location(id * 10, 7));
                expected.put(id, LedgerRecords.location(id * 10, 7));
            }
        }
        // Replaced (journal replay adds an entry again): counted once, the latest location wins.
        state.putLocation(42, LedgerRecords.location(99_999, 7));
        expected.put(42L, LedgerRecords.location(99_999, 7));
        // The array now holds ids up to 8191 (doubled from 16). Far past its end: kept in the map.
        final long far = 8192 + LedgerState.DENSE_SLACK + 1;
        state.putLocation(far, LedgerRecords.location(1, 1));
        expected.put(far, LedgerRecords.location(1, 1));
        // Within the slack past the array's end, but after a far id: the map too (the array never grows over the map's ids).
        state.putLocation(8300, LedgerRecords.location(2, 1));
        expected.put(8300L, LedgerRecords.location(2, 1));
        // Inside the array still: the array.
        state.putLocation(8191, LedgerRecords.location(3, 1));
        expected.put(8191L, LedgerRecords.location(3, 1));

        assertEquals(expected.size(), state.entryCount());
        assertEquals(far, state.lastEntryId());
        for (long id = -1; id < far + 2; id++) {
            assertEquals(expected.getOrDefault(id, -1L), state.location(id), "id=" + id);
        }
        final java.util.PrimitiveIterator.OfLong ids = state.entryIds();
        for (final long id : expected.keySet()) {
            assertEquals(id, ids.nextLong());
        }
        assertEquals(false, ids.hasNext());
    }

    private static ByteBuf record(final long entryId) {
        final byte[] payload = new byte[LedgerRecords.ENTRY_PREFIX_LENGTH];
        Unpooled.wrappedBuffer(payload).setLong(LedgerRecords.ENTRY_ID_OFFSET, entryId);
        return LedgerRecords.record(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, LedgerRecords.TYPE_ENTRY,
            Unpooled.wrappedBuffer(payload));
    }

    private static long idOf(final ByteBuf payload) {
        try {
            return payload.getLong(payload.readerIndex() + LedgerRecords.ENTRY_ID_OFFSET);
        } finally {
            payload.release();
        }
    }

    @Test
    void shouldServeEveryEntryInFlightAcrossGrowthAndDropThemInCompletionOrder() {
        final LedgerState state = new LedgerState(1, "ledger-1", 0);
        final List<ByteBuf> records = new ArrayList<>();
        synchronized (state) {
            for (long id = 0; id < 100; id++) {
                final ByteBuf record = record(id);
                records.add(record);
                state.putPending(id, record);
            }
        }
        for (long id = 0; id < 100; id++) {
            assertEquals(id, idOf(state.pendingPayload(id)));
        }
        // Completions in order take the oldest; the ring wraps as it empties and fills again.
        for (int i = 0; i < 60; i++) {
            state.completed(records.get(i));
            assertEquals(0, records.get(i).refCnt(), "the ring's reference is dropped");
            assertNull(state.pendingPayload(i));
        }
        synchronized (state) {
            for (long id = 100; id < 150; id++) {
                final ByteBuf record = record(id);
                records.add(record);
                state.putPending(id, record);
            }
        }
        assertEquals(90, state.pendingCount());
        for (long id = 60; id < 150; id++) {
            assertEquals(id, idOf(state.pendingPayload(id)));
        }
        // An append refused at once completes before the older ones: taken from the middle, the rest kept in order.
        state.completed(records.get(120));
        assertNull(state.pendingPayload(120));
        for (int i = 60; i < 150; i++) {
            if (i != 120) {
                assertEquals(i, idOf(state.pendingPayload(i)));
                state.completed(records.get(i));
            }
        }
        assertEquals(0, state.pendingCount());
    }

    @Test
    void shouldServeTheLatestCopyOfAnEntryAddedTwice() {
        final LedgerState state = new LedgerState(1, "ledger-1", 0);
        final ByteBuf first = record(7);
        final ByteBuf second = record(7);
        second.setByte(LedgerRecords.HEADER_LENGTH + LedgerRecords.ENTRY_PREFIX_LENGTH - 1, 42);
        synchronized (state) {
            state.putPending(7, first);
            state.putPending(7, second);
        }
        final ByteBuf payload = state.pendingPayload(7);
        assertEquals(42, payload.getByte(payload.readerIndex() + LedgerRecords.ENTRY_PREFIX_LENGTH - 1));
        payload.release();
        state.completed(first);
        state.completed(second);
        assertNull(state.pendingPayload(7));
        assertEquals(0, first.refCnt());
        assertEquals(0, second.refCnt());
    }
}
