package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** {@link LedgerState}'s queue of entries in flight: order, growth, removal out of order, latest copy wins, references. */
class LedgerStateTest {

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
