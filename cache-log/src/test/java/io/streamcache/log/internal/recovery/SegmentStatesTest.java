package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationMemory;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * {@link SegmentStates} against a {@link TreeMap} keyed by unsigned id: random puts (new ids and
 * replacements) over dense, page-edge, above-the-dense-limit and negative (large unsigned) ids.
 */
class SegmentStatesTest {
    @Test
    void shouldHoldWhatAMapHoldsInUnsignedIdOrder() {
        try (LocationMemory memory = new LocationMemory()) {
            run(memory);
        }
    }

    private static void run(final LocationMemory memory) {
        for (long seed = 1; seed <= 20; seed++) {
            final SplittableRandom random = new SplittableRandom(seed);
            final SegmentStates states = new SegmentStates();
            if (random.nextBoolean()) {
                states.reserve(random.nextInt(100_000));
            }
            final TreeMap<Long, SegmentState> model = new TreeMap<>();
            for (int op = 0; op < 3000; op++) {
                final int id = randomId(random);
                if (random.nextInt(4) == 0) {
                    assertSame(model.get(Integer.toUnsignedLong(id)), states.get(id), "id=" + id);
                    continue;
                }
                final SegmentState state = new SegmentState(id, "s" + op, 0, 0, false, 1, memory);
                states.put(state);
                model.put(Integer.toUnsignedLong(id), state);
            }
            assertEquals(model.size(), states.size());
            final List<SegmentState> inOrder = new ArrayList<>();
            states.forEachInIdOrder(inOrder::add);
            assertEquals(new ArrayList<>(model.values()), inOrder, "seed=" + seed);
            assertEquals(inOrder, List.of(states.toArrayInIdOrder()));
            for (final long id : model.keySet()) {
                assertSame(model.get(id), states.get((int) id));
            }
        }
    }

    @Test
    void shouldFindNothingInAnEmptyTable() {
        final SegmentStates states = new SegmentStates();
        for (final int id : new int[] {0, 1, 1023, 1024, SegmentStates.DENSE_LIMIT - 1, SegmentStates.DENSE_LIMIT, -1,
            Integer.MIN_VALUE}) {
            assertNull(states.get(id));
        }
        assertEquals(0, states.size());
        assertEquals(0, states.toArrayInIdOrder().length);
    }

    private static int randomId(final SplittableRandom random) {
        return switch (random.nextInt(6)) {
            case 0 -> random.nextInt(64);
            case 1 -> random.nextInt(200_000);
            case 2 -> SegmentStates.PAGE_IDS * random.nextInt(1, 50) + random.nextInt(-1, 1);
            case 3 -> SegmentStates.DENSE_LIMIT + random.nextInt(-2, 2);
            case 4 -> random.nextInt(SegmentStates.DENSE_LIMIT, Integer.MAX_VALUE);
            default -> random.nextInt(Integer.MIN_VALUE, 0);
        };
    }
}
