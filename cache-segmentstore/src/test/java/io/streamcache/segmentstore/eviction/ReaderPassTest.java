package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ReaderPass} on its own: the snapshot a pass takes, the cut-off's steps and the idle
 * registered readers it closes. The eviction orders it produces are tested through the policy
 * ({@code ReaderAwarePolicyTest}). The clock is the test's own counter.
 */
class ReaderPassTest {
    private static final int B = 4096;
    private static final long IDLE = 1_000;

    private final AtomicLong clock = new AtomicLong();
    private final ReaderRegistry registry = new ReaderRegistry(clock::get, IDLE / 8);
    private final ReuseModel model = new ReuseModel(ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT);
    private final ReaderPass pass = new ReaderPass(registry, new FillAdmission(registry, IDLE, 0), model, clock::get, IDLE, 0,
        ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT);

    private static ReadIndexEntry block(final int index, final int generation) {
        return new ReadIndexEntry((long) index * B, B, 1, generation);
    }

    @Test
    void dataAReaderHasPassedRanksBelowDataAheadOfIt() {
        registry.register("s", 0).position(2L * B);
        pass.begin(10);
        final ReadIndexEntry passed = block(0, 5);
        final ReadIndexEntry ahead = block(3, 5);
        pass.survey("s", passed);
        pass.survey("s", ahead);
        assertTrue(pass.advance());
        assertTrue(pass.select("s", passed), "the lowest rank goes at the first step");
        assertFalse(pass.select("s", ahead));
        while (pass.advance()) {
            // up to the last step
        }
        assertTrue(pass.select("s", ahead), "at the last step every surveyed entry is at or below the cut-off");
    }

    @Test
    void anEntryUsedInThePassesGenerationIsNeverRankedOrSelected() {
        pass.begin(10);
        final ReadIndexEntry fresh = block(0, 10);
        pass.survey("s", fresh);
        assertFalse(pass.advance(), "nothing was ranked");
        assertFalse(pass.select("s", fresh));
    }

    @Test
    void aRegisteredReaderIdlePastTheTimeoutIsClosedAndCounted() {
        final ReaderAwarePolicy.Reader reader = registry.register("s", 0);
        pass.begin(1);
        assertEquals(0, pass.idleReadersDropped());
        clock.addAndGet(IDLE + 1);
        pass.begin(2);
        assertTrue(reader.isClosed());
        assertEquals(1, pass.idleReadersDropped());
        assertEquals(0, registry.readerCount("s"));
    }
}
