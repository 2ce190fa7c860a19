package io.streamcache.log;

/**
 * The log's current file is no longer the directory's: deleted (unlinked) or replaced by
 * another file under its name while the writer had it open; an immutable value, safe to pass
 * between threads. Everything written into it since would be lost at the next open, so the
 * writer noticed it at a force (it compares the open file's identity with the path's after every
 * force and at every roll), failed that force's appends, and refuses appends from then on: a
 * retry cannot bring the file back.
 *
 * <p>No request it failed was acknowledged. Appends acknowledged before the loss may have been
 * in the lost file: close the store, restore the file (or accept the loss), and reopen; recovery
 * refuses a log missing a file its writer recorded as live
 * ({@link LogConfig.Builder#allowMissingFiles(boolean)}).
 */
public final class LogFileLostException extends LogFailedException {
    private static final long serialVersionUID = 1L;

    public LogFileLostException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
