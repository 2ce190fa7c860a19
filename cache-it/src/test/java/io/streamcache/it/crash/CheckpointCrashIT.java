package io.streamcache.it.crash;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The recovery checkpoint under SIGKILL: {@link CompactionCrashIT}'s rounds (a child appending
 * while its compactor copies and retires files, killed at a random moment, every acknowledged
 * byte checked after each open) with {@code checkpointFiles(1)} in the child and in the opens,
 * so that with 256 KiB files a checkpoint is written after nearly every roll and the kills land
 * while one is being replayed or written, and the opens start from checkpoints whose covered
 * files compaction deleted since.
 *
 * <pre>
 *  rounds: streamcache.checkpointCrash.rounds (6; about 15 s of CI time)
 *  at the end: a CHECKPOINT is there and covers files (its FILE_NUMBER is past the oldest file)
 * </pre>
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CheckpointCrashIT {
    @TempDir
    Path root;

    @Test
    void shouldKeepEveryAcknowledgedByteWhenKilledWhileCheckpointsAreWritten() throws Exception {
        final int rounds = Integer.getInteger("streamcache.checkpointCrash.rounds", 6);
        final int fromCheckpoint = CompactionCrashIT.killAndVerify(root, rounds, 1, "CheckpointCrashIT");
        System.out.println("CheckpointCrashIT: " + fromCheckpoint + " of " + rounds + " opens started from a checkpoint");
        assertTrue(fromCheckpoint > 0, "some open started from a checkpoint");
        final Path checkpoint = root.resolve("log").resolve("CHECKPOINT");
        assertTrue(Files.exists(checkpoint), "the workload wrote a recovery checkpoint");
        final long fileNumber = ByteBuffer.wrap(Files.readAllBytes(checkpoint)).order(ByteOrder.LITTLE_ENDIAN).getLong(16);
        assertTrue(fileNumber > 2, "the checkpoint covers files: FILE_NUMBER=" + fileNumber);
    }
}
