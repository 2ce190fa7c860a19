package io.streamcache.log.internal;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.LogWriterMXBean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Completion flows one way: each request's outcome goes to the handler it was submitted with,
 * on the completion thread, before its future completes; the writer has no handler of its own.
 */
@Timeout(60)
class CommitHandlerTest {
    @TempDir
    Path directory;

    /** Records which requests it saw, and whether each one's future was still pending then. */
    private static final class Recording implements LogCommitHandler {
        final List<String> seen = new CopyOnWriteArrayList<>();
        final List<Boolean> pendingWhenSeen = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        private final String name;

        Recording(final String name) {
            this.name = name;
        }

        @Override
        public void committed(final LogRequest request) {
            seen.add(name + ":" + request.type() + "@" + request.segmentOffset());
            pendingWhenSeen.add(!request.isDone());
            threads.add(Thread.currentThread().getName());
        }

        @Override
        public void failed(final LogRequest request, final Throwable cause) {
            seen.add(name + ":failed@" + request.segmentOffset());
        }
    }

    @Test
    void shouldApplyEachRequestThroughTheHandlerItWasSubmittedWithInSubmissionOrder() throws Exception {
        final Recording a = new Recording("a");
        final Recording b = new Recording("b");
        final List<String> created = Collections.synchronizedList(new ArrayList<>());
        final StreamcacheThreads threads = (role, owner, task) -> {
            created.add(role.name());
            return StreamcacheThreads.defaults().newThread(role, "handler-test-" + owner, task);
        };
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory, LogRecordListener.NONE, RecoveredLog.empty(), threads)) {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "one", null, a).get(10, TimeUnit.SECONDS);
            writer.create(epoch, 2, "two", null, b).get(10, TimeUnit.SECONDS);
            final List<LogRequest> requests = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                requests.add(writer.append(epoch, 1 + (i & 1), i * 100L, data(1 + (i & 1), i * 100L, 100), null, (i & 1) == 0 ? a : b));
            }
            final LogRequest plain = writer.append(epoch, 1, 5000, data(1, 5000, 10), null);
            for (final LogRequest request : requests) {
                request.get(10, TimeUnit.SECONDS);
            }
            assertEquals(5000L, plain.get(10, TimeUnit.SECONDS), "a request without a handler completes by its future alone");

            final List<String> expectedA = new ArrayList<>(List.of("a:" + LogRecordDescriptor.TYPE_CREATE + "@0"));
            final List<String> expectedB = new ArrayList<>(List.of("b:" + LogRecordDescriptor.TYPE_CREATE + "@0"));
            for (int i = 0; i < 20; i++) {
                ((i & 1) == 0 ? expectedA : expectedB).add(((i & 1) == 0 ? "a" : "b") + ":" + LogRecordDescriptor.TYPE_DATA + "@" + i * 100L);
            }
            assertEquals(expectedA, a.seen, "each handler sees its own requests, in submission order");
            assertEquals(expectedB, b.seen);
            assertFalse(a.pendingWhenSeen.contains(false), "the handler runs before the future completes");
            assertTrue(a.threads.stream().allMatch(name -> name.startsWith("streamcache-log-completer-handler-test-")),
                "on the completion thread, created through the given threads: " + a.threads);
        }
        assertTrue(created.containsAll(List.of("LOG_WRITER", "LOG_COMPLETER", "LOG_FILES")), "threads created: " + created);
    }

    @Test
    void shouldRegisterTheWriterMBeanWhileItRunsAndUnregisterItAtClose() throws Exception {
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final ObjectName name;
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            name = new ObjectName("io.streamcache:type=LogWriter,name=" + ObjectName.quote(writer.name()));
            assertTrue(server.isRegistered(name));
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "one", null).get(10, TimeUnit.SECONDS);
            writer.append(epoch, 1, 0, data(1, 0, 1000), null).get(10, TimeUnit.SECONDS);
            final LogWriterMXBean bean = JMX.newMXBeanProxy(server, name, LogWriterMXBean.class);
            assertEquals(writer.name(), bean.getName());
            assertEquals(writer.stats().batches(), bean.getBatches());
            assertEquals(1000 + "one".length(), bean.getPayloadBytes(), "the append and the CREATE's name");
            assertEquals(2, bean.getRequests());
            assertFalse(bean.isFailed());
        }
        assertFalse(server.isRegistered(name), "unregistered at close");
    }
}
