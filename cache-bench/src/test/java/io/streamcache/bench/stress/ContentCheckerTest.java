package io.streamcache.bench.stress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class ContentCheckerTest {
    @Test
    void shouldVerifyWhatItFilledAtAnyOffsetAndLength() {
        final SplittableRandom random = new SplittableRandom(7);
        final ByteBuf buffer = Unpooled.buffer(4096);
        for (int i = 0; i < 2_000; i++) {
            final long seed = random.nextLong();
            final long offset = random.nextLong(1L << 40);
            final int length = random.nextInt(4096);
            buffer.clear();
            ContentChecker.fill(buffer, SegmentContent.SPLITMIX, seed, offset, length);
            assertEquals(length, buffer.readableBytes());
            assertEquals(ContentChecker.MATCH, ContentChecker.firstMismatch(buffer, SegmentContent.SPLITMIX, seed, offset));
            for (int k = 0; k < length; k += 97) {
                assertEquals(SegmentContent.SPLITMIX.byteAt(seed, offset + k), buffer.getByte(k), "byte " + k);
            }
        }
    }

    @Test
    void shouldVerifyASplitRangeLikeOneRange() {
        final ByteBuf whole = Unpooled.buffer(1000);
        ContentChecker.fill(whole, SegmentContent.SPLITMIX, 42, 13, 1000);
        final ByteBuf tail = whole.slice(333, 667);
        assertEquals(ContentChecker.MATCH, ContentChecker.firstMismatch(tail, SegmentContent.SPLITMIX, 42, 13 + 333));
        assertNotEquals(ContentChecker.MATCH, ContentChecker.firstMismatch(tail, SegmentContent.SPLITMIX, 42, 13 + 332));
    }

    @Test
    void shouldReportTheFirstMismatchedOffset() {
        final SplittableRandom random = new SplittableRandom(11);
        final ByteBuf buffer = Unpooled.buffer(512);
        for (int i = 0; i < 500; i++) {
            final long offset = random.nextLong(1 << 20);
            final int length = 1 + random.nextInt(512);
            buffer.clear();
            ContentChecker.fill(buffer, SegmentContent.SPLITMIX, 5, offset, length);
            final int bad = random.nextInt(length);
            buffer.setByte(bad, buffer.getByte(bad) ^ (1 << random.nextInt(8)));
            assertEquals(offset + bad, ContentChecker.firstMismatch(buffer, SegmentContent.SPLITMIX, 5, offset));
        }
    }

    @Test
    void shouldGiveSegmentsDifferentContent() {
        assertNotEquals(SegmentContent.SPLITMIX.word(SegmentContent.segmentSeed(1, 0), 0),
            SegmentContent.SPLITMIX.word(SegmentContent.segmentSeed(1, 1), 0));
    }
}
