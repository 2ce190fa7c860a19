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

    @Test
    void shouldCheckACompositeOfReadOnlyDirectAndHeapPartsAtRaggedBoundariesLikeOneRange() {
        final SplittableRandom random = new SplittableRandom(13);
        for (int trial = 0; trial < 300; trial++) {
            final long seed = random.nextLong();
            final long offset = random.nextLong(1L << 30);
            final int parts = 1 + random.nextInt(40);
            final ByteBuf[] views = new ByteBuf[parts];
            final ByteBuf[] backing = new ByteBuf[parts];
            final int[] leads = new int[parts];
            long at = offset;
            for (int p = 0; p < parts; p++) {
                final int length = random.nextInt(300);
                final ByteBuf part = random.nextBoolean() ? Unpooled.directBuffer(length + 16) : Unpooled.buffer(length + 16);
                final int lead = random.nextInt(16);
                part.writerIndex(lead);
                ContentChecker.fill(part, SegmentContent.SPLITMIX, seed, at, length);
                // A slice, as the cache's views are: FixedCompositeByteBuf reads a part from its index 0.
                views[p] = part.slice(lead, length).asReadOnly();
                backing[p] = part;
                leads[p] = lead;
                at += length;
            }
            final ByteBuf composite = Unpooled.wrappedUnmodifiableBuffer(views);
            final int total = (int) (at - offset);
            assertEquals(total, composite.readableBytes());
            assertEquals(ContentChecker.MATCH, ContentChecker.firstMismatch(composite, SegmentContent.SPLITMIX, seed, offset));
            if (total == 0) {
                continue;
            }
            // One flipped bit in some part: the offset found is exactly that byte's.
            final int bad = random.nextInt(total);
            int skip = bad;
            for (int p = 0; p < parts; p++) {
                if (skip < views[p].readableBytes()) {
                    final int index = leads[p] + skip;
                    backing[p].setByte(index, backing[p].getByte(index) ^ (1 << random.nextInt(8)));
                    break;
                }
                skip -= views[p].readableBytes();
            }
            assertEquals(offset + bad, ContentChecker.firstMismatch(composite, SegmentContent.SPLITMIX, seed, offset), "trial " + trial);
        }
    }
}
