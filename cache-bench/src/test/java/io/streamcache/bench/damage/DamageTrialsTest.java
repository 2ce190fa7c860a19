package io.streamcache.bench.damage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seeded sample of the {@code damage} command's trials, for CI: cleanly closed and killed
 * stores, every damage kind, uniform and near the tail; every acknowledged record survives with
 * the right bytes, or the open fails naming the damaged file (a killed store may lose its last
 * batch to damage there, as a torn write).
 */
@Timeout(300)
class DamageTrialsTest {
    @TempDir
    Path work;

    @Test
    void shouldKeepEveryAcknowledgedRecordOrNameTheDamagedFile() throws Exception {
        final DamageTrials trials = new DamageTrials(work, 10, 6_000);
        trials.build();
        trials.run(0, 48);
        trials.print(System.out);

        assertEquals(List.of(), trials.failures());
        final Map<DamageTrials.Outcome, Integer> byOutcome = new EnumMap<>(DamageTrials.Outcome.class);
        final int[] total = {0};
        trials.counts().forEach((group, byKind) -> byKind.forEach((kind, counts) -> counts.forEach((outcome, n) -> {
            byOutcome.merge(outcome, n, Integer::sum);
            total[0] += n;
        })));
        assertEquals(48, total[0]);
        assertTrue(byOutcome.getOrDefault(DamageTrials.Outcome.DETECTED, 0) > 0, byOutcome.toString());
        assertTrue(trials.counts().containsKey("clean tail") && trials.counts().containsKey("killed tail")
            && trials.counts().containsKey("clean uniform") && trials.counts().containsKey("killed uniform"), trials.counts().toString());
    }
}
