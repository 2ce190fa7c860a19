package io.streamcache.log.internal.history;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.internal.recovery.LogRecovery;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import io.streamcache.log.internal.recovery.TestLogWriter;
import io.streamcache.log.HistoricalReadMXBean;
import io.streamcache.log.HistoricalReadStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class HistoricalReadMBeanTest {
    @TempDir
    Path directory;

    @Test
    void shouldReadOnItsOwnThreadsAndShowItsStatsThroughItsMBeanUntilClosed() throws Exception {
        final TestLogWriter writer = new TestLogWriter(directory, 1 << 20, 64 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 50; i++) {
            writer.data(1, 1000);
        }
        writer.close();
        final RecoveredLog log = LogRecovery.builder(directory).build().recover();
        final RecoveredSegment one = log.segment("one");

        final List<String> roles = new CopyOnWriteArrayList<>();
        final StreamcacheThreads threads = (role, owner, task) -> {
            roles.add(role + "/" + owner);
            return StreamcacheThreads.defaults().newThread(role, owner, task);
        };
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final ObjectName name = new ObjectName("io.streamcache:type=HistoricalReads,name=" + ObjectName.quote("mbean-test-reader"));
        try (LogFileChannels channels = new LogFileChannels(directory);
             HistoricalReader reader = HistoricalReader.builder(channels).rangeLength(16 << 10).threads(1).streamcacheThreads(threads)
                 .name("mbean-test-reader").build()) {
            assertTrue(server.isRegistered(name));
            final HistoricalReadMXBean bean = JMX.newMXBeanProxy(server, name, HistoricalReadMXBean.class);
            assertEquals(0, bean.getRangesRead());
            reader.read(one.id(), one.locations(), 100).get(10, TimeUnit.SECONDS);
            reader.read(one.id(), one.locations(), 20_000).get(10, TimeUnit.SECONDS);
            final HistoricalReadStats stats = reader.stats();
            assertEquals(2, stats.loads());
            assertEquals(stats.loads(), bean.getRangesRead());
            assertEquals(stats.bytesRead(), bean.getBytesRead());
            assertTrue(bean.getBytesRead() >= 2 * (16 << 10), "two ranges of 16 KiB read");
            assertEquals(0, bean.getFailures());
            assertEquals(List.of("LOG_READER/mbean-test-reader"), roles, "one reading thread, from the given threads");
        }
        assertFalse(server.isRegistered(name), "unregistered at close");
    }
}
