package io.streamcache.bench.stress;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScenarioConfigTest {
    private static StressConfig parse(final String... args) {
        return StressConfig.parse(args);
    }

    private static void assertRejected(final String fragment, final String... args) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(args));
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
    }

    @Test
    void shouldHaveNoPhasesWithoutAScenario() {
        final StressConfig config = parse();
        assertFalse(config.phased());
        assertFalse(config.storm);
        assertFalse(config.slowConsumer);
        assertFalse(config.compare);
        assertNull(config.disturbAt);
        assertEquals("none", config.scenario());
    }

    @Test
    void shouldPutTheDisturbanceInTheMiddleThirdByDefault() {
        final StressConfig config = parse("--scenario", "catchup-storm", "--duration", "30s", "--cache-size", "64m");
        assertTrue(config.phased());
        assertTrue(config.storm);
        assertFalse(config.slowConsumer);
        assertEquals(Duration.ofSeconds(10), config.disturbAt);
        assertEquals(Duration.ofSeconds(10), config.disturbFor);
        assertEquals(4, config.stormReaders);
        assertEquals(1 << 20, config.stormReadSize);
        assertEquals(0, config.stormRate, "the storm reads as fast as it can by default");
        assertEquals(64L << 20, config.slowHold, "the slow consumer holds as much as the cache by default");
        assertEquals("catchup-storm", config.scenario());
        assertFalse(config.slowFromTail, "the slow consumer reads from the start by default");
        assertEquals(StressConfig.SlowBudget.OWN, config.slowBudget, "with a budget of its own by default");
        assertEquals(0, config.readBudget, "the store's default read budget");
    }

    @Test
    void shouldParseEveryScenarioFlag() {
        final StressConfig config = parse("--scenario=slow-consumer,catchup-storm", "--duration", "1m", "--disturb-at", "5s",
            "--disturb-for=20s", "--storm-readers", "8", "--storm-read-size", "256k", "--storm-rate", "150", "--slow-hold", "16m",
            "--slow-from", "tail", "--thread-dump", "--slow-budget", "fail-fast", "--read-budget", "4m", "--compare", "--rounds", "3");
        assertTrue(config.storm && config.slowConsumer);
        assertEquals("catchup-storm,slow-consumer", config.scenario());
        assertEquals(Duration.ofSeconds(5), config.disturbAt);
        assertEquals(Duration.ofSeconds(20), config.disturbFor);
        assertEquals(8, config.stormReaders);
        assertEquals(256 << 10, config.stormReadSize);
        assertEquals(150.0, config.stormRate);
        assertEquals(16L << 20, config.slowHold);
        assertTrue(config.slowFromTail);
        assertTrue(config.threadDump);
        assertEquals(StressConfig.SlowBudget.FAIL_FAST, config.slowBudget);
        assertEquals(4L << 20, config.readBudget);
        assertTrue(config.compare);
        assertEquals(3, config.rounds);
        assertTrue(config.toString().contains("scenario=catchup-storm,slow-consumer"), config.toString());
    }

    @Test
    void shouldAcceptCompareAsAFlagWithOrWithoutAValue() {
        assertTrue(parse("--scenario", "slow-consumer", "--compare", "--duration", "9s").compare);
        assertTrue(parse("--scenario", "slow-consumer", "--duration", "9s", "--compare").compare);
        assertFalse(parse("--scenario", "slow-consumer", "--compare=off", "--duration", "9s").compare);
    }

    @Test
    void shouldRejectScenarioFlagsThatDoNotFit() {
        assertRejected("--scenario=storm must be", "--scenario", "storm");
        assertRejected("--compare needs a --scenario", "--compare");
        assertRejected("--rounds needs --compare", "--scenario", "catchup-storm", "--rounds", "2");
        assertRejected("need a --scenario", "--disturb-at", "5s");
        assertRejected("need a --scenario", "--thread-dump");
        assertRejected("not --ops", "--scenario", "catchup-storm", "--ops", "1000");
        assertRejected("must end inside --duration", "--scenario", "catchup-storm", "--duration", "10s", "--disturb-at", "5s",
            "--disturb-for", "5s");
        assertRejected("cannot be combined", "--scenario", "slow-consumer", "--duration", "30s", "--restart-at", "10s");
        assertRejected("leave out --dir", "--scenario", "slow-consumer", "--compare", "--dir", "d");
        assertRejected("--storm-readers", "--scenario", "catchup-storm", "--storm-readers", "0");
        assertRejected("--slow-hold", "--scenario", "slow-consumer", "--slow-hold", "1k");
        assertRejected("--slow-budget=x must be one of own, fail-fast, store", "--scenario", "slow-consumer", "--slow-budget", "x");
        assertRejected("--read-budget", "--read-budget", "1k");
        assertRejected("--storm-rate=0 must be in", "--scenario", "catchup-storm", "--storm-rate", "0");
        assertRejected("--slow-from=middle must be start or tail", "--scenario", "slow-consumer", "--slow-from", "middle");
    }

    @Test
    void shouldMakeABaselineRunWithTheSamePhasesAndTheDisturbanceOff() {
        final StressConfig config = parse("--scenario", "catchup-storm,slow-consumer", "--compare", "--rounds", "2", "--duration", "12s",
            "--producers", "3", "--cache-size", "16m");
        final StressConfig baseline = config.forRun(false, Path.of("out", "baseline-1"));
        assertFalse(baseline.storm || baseline.slowConsumer || baseline.compare);
        assertTrue(baseline.phased());
        assertEquals(config.disturbAt, baseline.disturbAt);
        assertEquals(config.disturbFor, baseline.disturbFor);
        assertEquals(3, baseline.producers);
        assertEquals(16L << 20, baseline.cacheSize);
        assertEquals(Path.of("out", "baseline-1"), baseline.out);
        final StressConfig scenario = config.forRun(true, Path.of("out", "scenario-1"));
        assertTrue(scenario.storm && scenario.slowConsumer);
        assertFalse(scenario.compare);
        assertEquals(1, scenario.rounds);
    }

    @Test
    void shouldListTheScenarioFlagsInTheUsage() {
        for (final String flag : new String[] {"--scenario", "--disturb-at", "--disturb-for", "--storm-readers", "--slow-hold", "--slow-from",
            "--thread-dump", "--slow-budget",
            "--read-budget", "--compare", "--rounds"}) {
            assertTrue(StressConfig.USAGE.contains(flag), flag);
        }
    }
}
