package io.streamcache.log;


import io.streamcache.log.internal.recovery.RecoveredLog;
import java.nio.file.Path;

/**
 * An immutable value thrown when a log file holds bytes that a write cut short cannot explain:
 * a record that fails validation with valid records after it, a record that validates but breaks
 * the format or the segments' history, a damaged file header before the tail, a file deleted
 * while it held live data. It names the file and the position of the first bad byte.
 *
 * <p>Recovery throws it under {@link CorruptionPolicy#FAIL} (the default); under
 * {@link CorruptionPolicy#TRUNCATE} it cuts the log there instead and reports the same
 * exception as {@code RecoveredLog#truncation()}. A historical read throws it (completes its
 * future with it) when a record it reads no longer validates.
 */
public final class LogCorruptedException extends LogException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final long fileNumber;
    private final long position;
    private final String reason;

    /**
     * @param file       the log file.
     * @param fileNumber its number.
     * @param position   the position of the first bad byte in it (0: the header, or the whole file).
     * @param reason     what is wrong, as {@code name=value} facts.
     */
    public LogCorruptedException(final Path file, final long fileNumber, final long position, final String reason) {
        super("log file " + file + " (fileNumber=" + fileNumber + ") is corrupted at position=" + position + ": " + reason);
        this.file = file;
        this.fileNumber = fileNumber;
        this.position = position;
        this.reason = reason;
    }

    /**
     * @return the corrupted log file.
     */
    public Path file() {
        return file;
    }

    /**
     * @return its number.
     */
    public long fileNumber() {
        return fileNumber;
    }

    /**
     * @return the position of the first bad byte in the file.
     */
    public long position() {
        return position;
    }

    /**
     * @return what is wrong, without the file and position.
     */
    public String reason() {
        return reason;
    }
}
