package io.streamcache.bench.mq;

import io.streamcache.segmentstore.queue.MessageQueueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MqBenchTest {
    @TempDir
    Path directory;

    @Test
    void shouldRoundTripEveryLengthAndDetectEachKindOfDamage() {
        final ByteBuffer buffer = ByteBuffer.allocate(200);
        for (int length = MqMessages.HEADER; length <= 120; length++) {
            buffer.clear();
            MqMessages.fill(buffer, 7, length * 3L, length);
            buffer.flip();
            assertNull(MqMessages.check(buffer, 7, length * 3L, length), "length " + length);
            assertNotNull(MqMessages.check(buffer, 8, length * 3L, length), "another queue");
            assertNotNull(MqMessages.check(buffer, 7, length * 3L + 1, length), "another index");
            for (int at = 0; at < length; at += 5) {
                final byte b = buffer.get(at);
                buffer.put(at, (byte) (b ^ 0x10));
                assertNotNull(MqMessages.check(buffer, 7, length * 3L, length), "flipped byte " + at + " of " + length);
                buffer.put(at, b);
            }
        }
    }

    @Test
    void shouldDrawLengthsInsideTheRange() {
        int shortest = Integer.MAX_VALUE;
        int longest = 0;
        for (long i = 0; i < 10_000; i++) {
            final int length = MqMessages.length((int) (i % 13), i, 100, 17 * 1024);
            shortest = Math.min(shortest, length);
            longest = Math.max(longest, length);
        }
        assertTrue(shortest >= 100 && shortest < 200, "shortest " + shortest);
        assertTrue(longest <= 17 * 1024 && longest > 17 * 1024 - 100, "longest " + longest);
    }

    @Test
    @Timeout(120)
    void shouldRunBothPhasesReopenAndCheckEveryMessage() throws Exception {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final int status = MqBench.run(new String[] {"--dir", directory.resolve("mq").toString(), "--threads", "4",
            "--topics", "5", "--queues", "500", "--phase1", "8m", "--phase2", "4m", "--cache", "64m", "--batch", "256k",
            "--max", "4k"}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        final String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, out);
        assertTrue(out.contains("every queue's count checked"), out);
        assertTrue(out.contains("\"phase1_MBps\""), out);
        assertTrue(out.contains("the AggregatingWriter on phase 1's stream") && out.contains("\"phase1_vs_writer\"")
            && out.contains("\"writer_cpu_s\""), out);
    }

    @Test
    @Timeout(120)
    void shouldRunTheWriterAloneWithoutTheFacade() throws Exception {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final Path dir = directory.resolve("writer-only");
        final int status = MqBench.run(new String[] {"--dir", dir.toString(), "--threads", "3", "--topics", "4",
            "--queues", "50", "--phase1", "4m", "--max", "2k", "--writer-only", "true"}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        final String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, out);
        assertTrue(out.contains("writer alone (own JVM)") && out.contains("\"writer_MBps\""), out);
        assertFalse(out.contains("phase 1:"), "the facade ran: " + out);
        assertFalse(java.nio.file.Files.exists(dir.resolve("writer")), "the baseline's log was left behind");
    }

    /**
     * The writer-alone baseline writes phase 1's stream as the store would: its log, opened by
     * the facade, holds every queue with messages 0..n-1, each with the bytes phase 1 gives it.
     */
    @Test
    @Timeout(120)
    void shouldWriteTheBaselineAsALogTheFacadeReadsBack() throws Exception {
        final MqBench.Config config = MqBench.parse(new String[] {"--dir", directory.toString(), "--threads", "3", "--topics", "4",
            "--queues", "50", "--max", "2k"});
        final Path log = directory.resolve("writer");
        final WriterBaseline.Result result = WriterBaseline.run(config, MqBench.logConfig(config, log), 1 << 20);
        assertTrue(result.bytes() >= 1 << 20 && result.messages() > 0 && result.forces() > 0, result.toString());
        long messages = 0;
        long bytes = 0;
        try (MessageQueueStore mq = MessageQueueStore.open(MqBench.logConfig(config, log), 64L << 20)) {
            for (int queue = 0; queue < config.queues; queue++) {
                final String topic = MqBench.topic(config, queue);
                final int id = MqBench.queueId(config, queue);
                final long count = mq.messageCount(topic, id);
                for (long offset = 0; offset < count; offset += 30) {
                    final Map<Integer, ByteBuffer> got = mq.getRange(topic, id, offset, 30);
                    assertEquals(Math.min(30, count - offset), got.size());
                    for (int i = 0; i < got.size(); i++) {
                        final int length = MqMessages.length(queue, offset + i, config.min, config.max);
                        assertNull(MqMessages.check(got.get(i), queue, offset + i, length));
                        bytes += length;
                    }
                }
                messages += count;
            }
        }
        assertEquals(result.messages(), messages);
        assertEquals(result.bytes(), bytes);
    }

    /** The workers' topic strings, made once per run, name every queue's topic as the baseline and the checks do. */
    @Test
    void shouldNameEachQueuesTopicWithTheRunsOneStringPerTopic() throws Exception {
        for (final String topics : new String[] {"1", "7", "100"}) {
            final MqBench.Config config = MqBench.parse(new String[] {"--dir", directory.toString(), "--topics", topics,
                "--queues", "1000"});
            final String[] names = config.topicNames();
            assertSame(names, config.topicNames());
            for (int queue = 0; queue < config.queues; queue++) {
                assertEquals(MqBench.topic(config, queue), names[queue / config.queuesPerTopic()], "queue " + queue);
            }
        }
    }

    @Test
    void shouldRefuseBadArgumentsByName() throws Exception {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final int status = MqBench.run(new String[] {"--dir", directory.toString(), "--min", "8"},
            new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertEquals(2, status);
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("min=8"), bytes.toString(StandardCharsets.UTF_8));
    }
}
