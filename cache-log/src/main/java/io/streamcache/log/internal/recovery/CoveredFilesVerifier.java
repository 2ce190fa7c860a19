package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * After an open from a {@link RecoveryCheckpoint}, checks in the background the files the
 * checkpoint covers, which the open did not read: every record's header, CRC and placement, as
 * the open's scan would (the same {@link LogScanner}), and that each file still ends where and
 * as the checkpoint's replay found it (END, END_POSITION, RECORD_COUNT, DATA_LENGTH). Damage is
 * logged at ERROR with the file and the position, and kept ({@link #damage()}); reads of the
 * damaged bytes fail with {@code LogCorruptedException} whether or not this ran, so it changes
 * when damage is reported, not what a read returns.
 *
 * <pre>
 *  open (from CHECKPOINT, F)          background, on the checkpoint thread
 *  -------------------------          ----------------------------------------------
 *  replay F .. tail                    wait {@link #START_DELAY_MILLIS} (the rest of the open)
 *  accept appends                      for each covered file below F still in the directory:
 *                                        scan it; differs from the checkpoint? -> ERROR, file, position
 *                                      then write checkpoints as before
 * </pre>
 *
 * Files deleted meanwhile (compaction, retirement) are skipped; a file that changed and is gone
 * by the time the difference is seen is not reported.
 */
final class CoveredFilesVerifier {
    private static final Logger LOG = LoggerFactory.getLogger(CoveredFilesVerifier.class);
    /** How long after the checkpoint thread starts the check begins: the open is still building the store then. */
    static final long START_DELAY_MILLIS = 2_000;

    /** One damaged file: where the scan stopped, and why. */
    record Damage(long fileNumber, long position, String reason) {
    }

    private final List<Damage> damage = new ArrayList<>();
    private long filesChecked;
    private long bytesChecked;

    /** @return the damage found, in file order (the checkpoint thread's; read it after it ended). */
    List<Damage> damage() {
        return damage;
    }

    long filesChecked() {
        return filesChecked;
    }

    long bytesChecked() {
        return bytesChecked;
    }

    /**
     * Checks the covered files of {@code checkpoint} that are in the directory.
     *
     * @param stop checked between files: true ends the check (close).
     * @return whether every file was checked (false if stopped).
     */
    boolean verify(final Path directory, final LogScanner scanner, final RecoveryCheckpoint checkpoint, final BooleanSupplier stop)
        throws RecoveryCheckpoint.Refused {
        for (final RecoveryCheckpoint.CoveredFile file : checkpoint.coveredFiles()) {
            if (stop.getAsBoolean()) {
                return false;
            }
            final Path path = directory.resolve(LogFileDescriptor.fileName(file.number()));
            final LogFileScan scan;
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
                scan = scanner.scan(channel, file.number(), record -> true);
            } catch (final NoSuchFileException e) {
                continue;
            } catch (final IOException e) {
                report(new Damage(file.number(), 0, "cannot be read: " + e), path);
                continue;
            }
            filesChecked++;
            bytesChecked += scan.size();
            if (scan.end() != file.end() || scan.endPosition() != file.endPosition() || scan.recordCount() != file.recordCount()
                || scan.dataLength() != file.dataLength() || scan.epoch() != file.epoch()
                || (scan.fileLength() > 0 && scan.size() < scan.fileLength())) {
                if (!Files.exists(path)) {
                    continue;
                }
                final long position = scan.fileLength() > 0 && scan.size() < scan.fileLength()
                    ? Math.min(scan.size(), scan.endPosition()) : scan.endPosition();
                report(new Damage(file.number(), position, scan.end() + (scan.reason() != null ? ": " + scan.reason() : "")
                    + "; the checkpoint's replay found END=" + file.end() + " END_POSITION=" + file.endPosition() + " RECORD_COUNT="
                    + file.recordCount() + " DATA_LENGTH=" + file.dataLength() + ", this scan END_POSITION=" + scan.endPosition()
                    + " RECORD_COUNT=" + scan.recordCount() + " DATA_LENGTH=" + scan.dataLength() + " size=" + scan.size()), path);
            }
        }
        return true;
    }

    private void report(final Damage found, final Path path) {
        damage.add(found);
        LOG.error("Log file {} (fileNumber={}), covered by the recovery checkpoint and not read at open, is damaged at position={}:"
            + " {}. Reads of its bytes fail with LogCorruptedException; an open with checkpointFiles(0) reports it too.", path,
            found.fileNumber(), found.position(), found.reason());
    }
}
