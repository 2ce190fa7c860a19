package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LedgerRecordsTest {

    @Test
    void shouldRoundTripLocationsAcrossTheirFields() {
        final SplittableRandom random = new SplittableRandom(13);
        final long[] offsets = {0, 1, LedgerRecords.MAX_SEGMENT_OFFSET, LedgerRecords.MAX_SEGMENT_OFFSET - 1};
        final int[] lengths = {0, 1, LedgerRecords.MAX_ENTRY_LENGTH, 1 << 20};
        for (final long offset : offsets) {
            for (final int length : lengths) {
                final long location = LedgerRecords.location(offset, length);
                assertEquals(offset, LedgerRecords.locationOffset(location));
                assertEquals(length, LedgerRecords.locationLength(location));
            }
        }
        for (int i = 0; i < 10_000; i++) {
            final long offset = random.nextLong(LedgerRecords.MAX_SEGMENT_OFFSET + 1);
            final int length = random.nextInt(LedgerRecords.MAX_ENTRY_LENGTH + 1);
            final long location = LedgerRecords.location(offset, length);
            assertEquals(offset, LedgerRecords.locationOffset(location));
            assertEquals(length, LedgerRecords.locationLength(location));
        }
    }

    @Test
    void shouldRejectLocationsThatDoNotFit() {
        final IllegalArgumentException offset = assertThrows(IllegalArgumentException.class,
            () -> LedgerRecords.location(LedgerRecords.MAX_SEGMENT_OFFSET + 1, 0));
        assertTrue(offset.getMessage().contains("payloadOffset="), offset.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LedgerRecords.location(-1, 0));
        final IllegalArgumentException length = assertThrows(IllegalArgumentException.class,
            () -> LedgerRecords.location(0, LedgerRecords.MAX_ENTRY_LENGTH + 1));
        assertTrue(length.getMessage().contains("length="), length.getMessage());
    }

    @Test
    void shouldFrameARecordWithTypeLengthAndAnUntouchedCopyOfThePayload() {
        final ByteBuf payload = Unpooled.buffer().writeLong(7).writeLong(3).writeLong(2).writeBytes(new byte[] {9, 8});
        payload.readerIndex(1);
        final ByteBuf record = LedgerRecords.record(UnpooledByteBufAllocator.DEFAULT, LedgerRecords.TYPE_ENTRY, payload);
        try {
            assertEquals(1, payload.readerIndex(), "the payload's indexes are not moved");
            assertEquals(LedgerRecords.HEADER_LENGTH + payload.readableBytes(), record.readableBytes());
            assertEquals(LedgerRecords.TYPE_ENTRY, record.getByte(LedgerRecords.TYPE_OFFSET));
            assertEquals(payload.readableBytes(), record.getInt(LedgerRecords.LENGTH_OFFSET));
            assertEquals(payload, record.slice(LedgerRecords.HEADER_LENGTH, payload.readableBytes()));
        } finally {
            record.release();
        }
    }
}
