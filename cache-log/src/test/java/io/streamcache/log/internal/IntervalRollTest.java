package io.streamcache.log.internal;

import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.DurabilityPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Under {@link DurabilityPolicy#interval} the writer forces a file that holds unforced writes
 * before it rolls away from it: it never forces that file again, and compaction may retire the
 * originals of the copies in it.
 */
@Timeout(60)
class IntervalRollTest {
    @TempDir
    Path directory;

    @Test
    void shouldForceAFileBeforeRollingAwayFromIt() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).fileFactory(hooks)
                 .durability(DurabilityPolicy.interval(Duration.ofHours(1))).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            writer.create(writer.healthyEpoch(), 1, "a", null).join();
            long offset = 0;
            while (writer.stats().filesRolled() < 2) {
                writer.append(1, offset, TestLogs.data(1, offset, 3000)).join();
                offset += 3000;
            }
            final String first = LogFileDescriptor.fileName(1);
            final List<String> events = new ArrayList<>();
            for (final String event : hooks.events) {
                if (event.endsWith(first)) {
                    events.add(event);
                }
            }
            assertTrue(events.size() > 2, events.toString());
            assertEquals("F " + first, events.get(events.size() - 1), "the last thing done to file 1 is a force: " + events);
        }
    }
}
