package io.streamcache.log.internal.recovery;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checkpoint thread's contract: {@link Checkpointer#fileStarted} only records the file; a
 * checkpoint is written once {@code checkpointFiles} files were started since the last one (or
 * since none), for the newest file started; a target it cannot use is skipped and the next roll
 * tries again; {@link Checkpointer#close()} ends the thread.
 */
@Timeout(60)
class CheckpointerTest {
    private static final long FILE_LENGTH = 128 << 10;
    private static final int BATCH = 16 << 10;

    @TempDir
    Path directory;

    private LogConfig config(final int checkpointFiles) {
        return LogConfig.builder(directory).fileLength(FILE_LENGTH).batchLength(BATCH).cutThreshold(8 << 10)
            .checkpointFiles(checkpointFiles).build();
    }

    private long checkpointFile() throws Exception {
        final Path file = directory.resolve(RecoveryCheckpoint.FILE_NAME);
        return Files.exists(file) ? ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN).getLong(16) : 0;
    }

    private static void await(final java.util.function.BooleanSupplier condition) throws InterruptedException {
        while (!condition.getAsBoolean()) {
            Thread.sleep(2);
        }
    }

    @Test
    void shouldCheckpointOnceEnoughFilesWereStartedForTheNewest() throws Exception {
        final TestLogWriter writer = LogRecoveryTest.randomWriter(directory, 11, 3000);
        writer.flush();
        assertTrue(writer.fileNumber() >= 7, "files: " + writer.fileNumber());
        final Checkpointer checkpointer = Checkpointer.start(config(3), StreamcacheThreads.defaults(), "test");
        try {
            checkpointer.fileStarted(2);
            checkpointer.fileStarted(2);
            // 2 files since none: nothing is due, and nothing is written (checked after a due one below).
            checkpointer.fileStarted(3);
            await(() -> checkpointer.written() == 1);
            assertEquals(3, checkpointFile());
            checkpointer.fileStarted(5);
            checkpointer.fileStarted(6);
            await(() -> checkpointer.written() == 2);
            assertEquals(6, checkpointFile(), "the newest file started, 3 after the last checkpoint");
            assertEquals(0, checkpointer.skipped());
        } finally {
            checkpointer.close();
        }
        writer.close();
        final LogRecovery recovery = LogRecovery.builder(directory).readOnly(true).checkpoint(true).build();
        CheckpointRecoveryTest.assertSameLive(LogRecovery.builder(directory).readOnly(true).build().recover(), recovery.recover());
        assertTrue(recovery.checkpointUsed());
    }

    @Test
    void shouldSkipATargetItCannotUseAndTryAgainAtTheNextRoll() throws Exception {
        final TestLogWriter writer = LogRecoveryTest.randomWriter(directory, 12, 3000);
        writer.flush();
        final Checkpointer checkpointer = Checkpointer.start(config(1), StreamcacheThreads.defaults(), "test");
        try {
            checkpointer.fileStarted(writer.fileNumber() + 5);
            await(() -> checkpointer.skipped() == 1);
            assertFalse(Files.exists(directory.resolve(RecoveryCheckpoint.FILE_NAME)), "no file of that number: no checkpoint");
            checkpointer.fileStarted(writer.fileNumber() + 6);
            await(() -> checkpointer.skipped() == 2);
            assertEquals(0, checkpointer.written());
        } finally {
            checkpointer.close();
        }
        writer.close();
    }

    @Test
    void shouldEndTheThreadAtClose() throws Exception {
        final Checkpointer checkpointer = Checkpointer.start(config(1), StreamcacheThreads.defaults(), "closing");
        checkpointer.close();
        checkpointer.close();
        for (final Thread thread : Thread.getAllStackTraces().keySet()) {
            assertFalse(thread.getName().contains("closing-checkpoint") && thread.isAlive(), thread.getName());
        }
    }
}
