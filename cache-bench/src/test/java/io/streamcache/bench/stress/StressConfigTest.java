package io.streamcache.bench.stress;

import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StressConfigTest {
    @Test
    void shouldUseDefaults() {
        final StressConfig config = StressConfig.parse(new String[0]);
        assertEquals(StressConfig.DURATION_DEFAULT, config.duration);
        assertEquals(StressConfig.CACHE_SIZE_DEFAULT, config.cacheSize);
        assertEquals(StressConfig.Durability.EVERY_BATCH, config.durability);
        assertEquals(StressConfig.Policy.GENERATIONS, config.policy);
        assertNull(config.dir);
        assertTrue(config.out.startsWith(Path.of("stress-results")));
    }

    @Test
    void shouldParseEveryFlag() {
        final StressConfig config = StressConfig.parse(new String[] {"--producers=3", "--parallelism", "5", "--segments", "7",
            "--write-size", "10-20", "--ops", "1000", "--tail-readers", "0", "--catchup-readers", "4", "--cache-size", "1g",
            "--durability", "interval", "--dir", "d", "--out", "o", "--seed", "9"});
        assertEquals(3, config.producers);
        assertEquals(5, config.parallelism);
        assertEquals(7, config.segments);
        assertEquals(10, config.minWriteSize);
        assertEquals(20, config.maxWriteSize);
        assertEquals(1000, config.ops);
        assertNull(config.duration);
        assertEquals(0, config.tailReaders);
        assertEquals(4, config.catchupReaders);
        assertEquals(1L << 30, config.cacheSize);
        assertEquals(StressConfig.Durability.INTERVAL, config.durability);
        assertEquals(Path.of("d"), config.dir);
        assertEquals(Path.of("o"), config.out);
        assertEquals(9, config.seed);
    }

    @Test
    void shouldParseTheCatchUpShareAndReadSizeAndRejectBadOnes() {
        final StressConfig config = StressConfig.parse(new String[] {"--catchup-share", "0.4", "--catchup-read-size", "64k"});
        assertEquals(0.4, config.catchupShare, 1e-12);
        assertEquals(64 * 1024, config.catchupReadSize);
        final StressConfig defaults = StressConfig.parse(new String[0]);
        assertEquals(0, defaults.catchupShare);
        assertEquals(CatchUpReader.MAX_READ_LENGTH, defaults.catchupReadSize);
        for (final String bad : new String[] {"0", "0.96", "-0.1", "x"}) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> StressConfig.parse(new String[] {"--catchup-share", bad}));
            assertTrue(e.getMessage().contains("--catchup-share"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--catchup-read-size", "2m"}));
    }

    @Test
    void shouldParseDurationsAndSizes() {
        assertEquals(Duration.ofMillis(500), StressConfig.parseDuration("500ms"));
        assertEquals(Duration.ofSeconds(90), StressConfig.parseDuration("90"));
        assertEquals(Duration.ofMinutes(2), StressConfig.parseDuration("2m"));
        assertEquals(256L << 20, StressConfig.parseSize("cache-size", "256m", 1, Long.MAX_VALUE));
        assertEquals(4096, StressConfig.parseSize("cache-size", "4k", 1, Long.MAX_VALUE));
        assertEquals(12345, StressConfig.parseSize("cache-size", "12345", 1, Long.MAX_VALUE));
    }

    @Test
    void shouldNameTheFlagInErrors() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--parallelism", "0"}))
            .getMessage().startsWith("--parallelism=0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--write-size", "2000000"}))
            .getMessage().startsWith("--write-size=2000000"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--duration", "0s"}))
            .getMessage().startsWith("--duration=0s"));
    }

    @Test
    void shouldDefaultRetentionToTwiceTheCacheAndPrefillOff() {
        final StressConfig config = StressConfig.parse(new String[] {"--cache-size", "1g"});
        assertEquals(2L << 30, config.retention);
        assertFalse(config.prefill);
        assertEquals(LogConfig.FILE_LENGTH_DEFAULT, config.logFileSize);
    }

    @Test
    void shouldParseRetentionPrefillAndLogFileSize() {
        assertEquals(0, StressConfig.parse(new String[] {"--retention", "off"}).retention);
        assertEquals(512L << 20, StressConfig.parse(new String[] {"--retention=512m", "--cache-size", "1g"}).retention);
        // --prefill alone, before another flag or last, means full.
        assertTrue(StressConfig.parse(new String[] {"--prefill", "--segments", "3"}).prefill);
        assertTrue(StressConfig.parse(new String[] {"--segments", "3", "--prefill"}).prefill);
        assertTrue(StressConfig.parse(new String[] {"--prefill", "full"}).prefill);
        assertFalse(StressConfig.parse(new String[] {"--prefill=off"}).prefill);
        assertEquals(8L << 20, StressConfig.parse(new String[] {"--log-file-size", "8m"}).logFileSize);
    }

    @Test
    void shouldRejectBadRetentionPrefillAndLogFileSize() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--retention", "1k"}))
            .getMessage().startsWith("--retention=1k"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--prefill", "half"}))
            .getMessage().startsWith("--prefill=half"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--log-file-size", "1m"}))
            .getMessage().startsWith("--log-file-size=1m"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--log-file-size", "5000001"}))
            .getMessage().contains("multiple of 4096"));
    }

    @Test
    void shouldParseThePolicy() {
        assertEquals(StressConfig.Policy.GENERATIONS, StressConfig.parse(new String[] {"--policy", "generations"}).policy);
        assertEquals(StressConfig.Policy.READER_AWARE, StressConfig.parse(new String[] {"--policy", "reader-aware"}).policy);
        assertEquals(StressConfig.Policy.HITMAP, StressConfig.parse(new String[] {"--policy=hitmap"}).policy);
        assertTrue(StressConfig.parse(new String[] {"--policy", "reader-aware"}).toString().contains(" policy=reader-aware "));
        assertTrue(StressConfig.USAGE.contains("--policy P"), StressConfig.USAGE);
    }

    @Test
    void shouldRejectAnUnknownPolicy() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> StressConfig.parse(new String[] {"--policy", "lru"}));
        assertEquals("--policy=lru must be one of generations, reader-aware, hitmap", e.getMessage());
        assertEquals("--policy needs a value (see --help)",
            assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--policy"})).getMessage());
        // Flag values are exact, as for --durability.
        assertThrows(IllegalArgumentException.class, () -> StressConfig.parse(new String[] {"--policy", "Reader-Aware"}));
    }

    @Test
    void shouldParseAndCheckTheRestartFlags() {
        assertEquals(StressConfig.Policy.READER_AWARE,
            StressConfig.parse(new String[] {"--duration", "3m", "--restart-at", "1m", "--policy", "reader-aware"}).policy);
        final StressConfig config = StressConfig.parse(new String[] {"--duration", "3m", "--restart-at", "60s", "--restart", "cold",
            "--segments", "8", "--cache-size", "64m"});
        assertEquals(60_000, config.restartAt.toMillis());
        assertFalse(config.restartWarm);
        assertEquals((64L << 20) / 8, config.restartRewind);
        assertTrue(config.region != null, "a default region file for the restart");
        assertTrue(StressConfig.parse(new String[] {"--duration", "3m", "--restart-at", "1m"}).restartWarm);
        assertEquals("--restart-at=60000ms must be inside --duration", assertThrows(IllegalArgumentException.class,
            () -> StressConfig.parse(new String[] {"--duration", "60s", "--restart-at", "60s"})).getMessage());
        assertEquals("--restart=tepid must be warm or cold", assertThrows(IllegalArgumentException.class,
            () -> StressConfig.parse(new String[] {"--restart", "tepid"})).getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> StressConfig.parse(new String[] {"--restart-at", "10s", "--policy", "hitmap"}));
        assertEquals(null, StressConfig.parse(new String[0]).restartAt);
    }
}
