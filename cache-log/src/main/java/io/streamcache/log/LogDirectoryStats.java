package io.streamcache.log;

/**
 * A snapshot of a log directory: its files now and its counters since it opened; an immutable
 * value. Taken under the directory's lock for the file counts, the counters read one by one.
 *
 * @param files           log files in the directory that hold (or held) records: not spares.
 * @param bytes           bytes those files and the prepared ones take: (files + prepared) x the
 *                        file length (files are created whole).
 * @param preparedFiles   spare files ready for the writer's next roll.
 * @param lockEpoch       the writer epoch the directory was opened with (its lock's).
 * @param filesCreated    files created (pre-written or extended) since open.
 * @param filesRecycled   files recycled into spares since open.
 * @param filesDeleted    files deleted since open.
 * @param bytesPreWritten zero bytes written to pre-write new files since open.
 */
public record LogDirectoryStats(int files, long bytes, int preparedFiles, long lockEpoch, long filesCreated, long filesRecycled,
                                long filesDeleted, long bytesPreWritten) {
}
