package io.streamcache.segmentstore.internal.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The record of the highest log file a writer rolled to: static methods only, thread-safe. The
 * file {@value #FILE_NAME} holds one US-ASCII line, {@code file=<decimal file number>}, written to
 * {@code CURRENT.tmp}, forced, renamed over {@value #FILE_NAME} and the directory forced at every
 * roll once the new file's SNAPSHOT is durable, so a crash leaves the old record or the new one.
 *
 * <p>The current file is never retired (compaction and truncation retire only files behind
 * it), so the log's files always reach at least as far as this record: a directory whose
 * highest log file is below it lost its last files (unlinked under a running writer, or by hand)
 * and recovery refuses it unless {@code LogConfig.allowMissingFiles} says so. A file missing
 * below the current one cannot be told from a file compaction deleted this way.
 */
public final class CurrentFileRecord {
    /** The record's file name in the log directory. */
    public static final String FILE_NAME = "CURRENT";

    private CurrentFileRecord() {
    }

    /** Records {@code fileNumber} as the writer's current file, durably. */
    static void write(final Path directory, final long fileNumber) throws IOException {
        final Path tmp = directory.resolve(FILE_NAME + ".tmp");
        final ByteBuffer content = ByteBuffer.wrap(("file=" + fileNumber + "\n").getBytes(StandardCharsets.US_ASCII));
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            while (content.hasRemaining()) {
                channel.write(content, content.position());
            }
            channel.force(true);
        }
        Files.move(tmp, directory.resolve(FILE_NAME), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /**
     * @return the file number recorded in {@code directory}, or 0 if there is no record (a log
     *         written before the record existed, or never rolled) or it does not parse.
     */
    public static long read(final Path directory) throws IOException {
        final String content;
        try {
            content = Files.readString(directory.resolve(FILE_NAME), StandardCharsets.US_ASCII).strip();
        } catch (final NoSuchFileException e) {
            return 0;
        }
        if (!content.startsWith("file=")) {
            return 0;
        }
        try {
            return Long.parseLong(content.substring("file=".length()));
        } catch (final NumberFormatException e) {
            return 0;
        }
    }
}
