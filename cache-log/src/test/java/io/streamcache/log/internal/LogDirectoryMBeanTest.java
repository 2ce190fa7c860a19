package io.streamcache.log.internal;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.LogDirectoryMXBean;
import io.streamcache.log.LogDirectoryStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class LogDirectoryMBeanTest {
    @TempDir
    Path directory;

    @Test
    void shouldShowTheDirectoryThroughItsMBeanWhileItsWriterRuns() throws Exception {
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final ObjectName name;
        final LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
        try (AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            name = new ObjectName("io.streamcache:type=LogDirectory,name=" + ObjectName.quote(logDirectory.name()));
            assertTrue(server.isRegistered(name), "registered when the writer starts the directory");
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "one", null).get(10, TimeUnit.SECONDS);
            writer.append(epoch, 1, 0, data(1, 0, 1000), null).get(10, TimeUnit.SECONDS);
            final LogDirectoryMXBean bean = JMX.newMXBeanProxy(server, name, LogDirectoryMXBean.class);
            final LogDirectoryStats stats = logDirectory.stats();
            assertEquals(1, stats.files());
            assertEquals(logDirectory.epoch(), stats.lockEpoch());
            assertEquals((stats.files() + (long) stats.preparedFiles()) * logDirectory.fileLength(), stats.bytes());
            assertEquals(logDirectory.name(), bean.getName());
            assertEquals(stats.files(), bean.getFiles());
            assertEquals(stats.lockEpoch(), bean.getLockEpoch());
            assertEquals(directory.toString(), bean.getPath());
        } finally {
            logDirectory.close();
        }
        assertFalse(server.isRegistered(name), "unregistered when the directory closes");
    }
}
