package io.streamcache.segmentstore.eviction;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link ReuseLearning}: what a pass learns from the registry. The clock is the test's own
 * counter, so nothing here depends on time passing.
 */
class ReuseLearningTest {
    private static final long B = 4096;
    private static final long IDLE = 1_000;

    private final AtomicLong clock = new AtomicLong();
    private final ReaderRegistry registry = new ReaderRegistry(clock::get, IDLE / 8);
    private final ReuseModel model = new ReuseModel(ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT);
    private final ReuseLearning learning = new ReuseLearning(registry, model, IDLE);

    @Test
    void aRegisteredReReadThatEndedTeachesTheModelOnce() {
        registry.readersOf("s").tail = 100 * B; // the tail a pass surveyed
        final ReaderAwarePolicy.Reader reader = registry.register("s", 10 * B);
        reader.position(30 * B);
        learning.learn(1, clock.get());
        assertEquals(0, model.sessions(), 1e-9, "a session still open teaches nothing");
        reader.close();
        learning.learn(2, clock.get());
        assertEquals(1, model.sessions(), 1e-6);
        learning.learn(3, clock.get());
        assertEquals(1, model.sessions(), 0.01, "an ended session is learned once (the count decays slowly with the generations)");
    }

    @Test
    void aReaderAtTheTailIsNoReRead() {
        registry.readersOf("s").tail = 100 * B;
        registry.register("s", 100 * B).close();
        learning.learn(1, clock.get());
        assertEquals(0, model.sessions(), 1e-9);
    }

    @Test
    void anInferredReReadTeachesTheModelOnceItIsIdlePastTheTimeout() {
        registry.readersOf("s").tail = 100 * B;
        registry.observeRead("s", 10 * B, 11 * B, IDLE);
        clock.addAndGet(10);
        registry.observeRead("s", 11 * B, 12 * B, IDLE);
        learning.learn(1, clock.get());
        assertEquals(0, model.sessions(), 1e-9, "still reading");
        clock.addAndGet(IDLE + 1);
        learning.learn(2, clock.get());
        assertEquals(1, model.sessions(), 1e-6);
        learning.learn(3, clock.get());
        assertEquals(1, model.sessions(), 0.01, "learned once (the count decays slowly with the generations)");
    }
}
