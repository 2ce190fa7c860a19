package io.streamcache.log.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The record of the log's live files: the file the writer rolled to and every file before it
 * that is still part of the log. Static methods and an immutable value; thread-safe.
 *
 * <h2>Format</h2>
 * The file {@value #FILE_NAME} holds US-ASCII lines, written whole to {@code CURRENT.tmp},
 * forced, renamed over {@value #FILE_NAME} and the directory forced, so a crash leaves the old
 * record or the new one:
 * <pre>
 *  version 2 (this code writes it)            version 1 (older writers; still read)
 *  +--------------------------------------+   +-------------+
 *  | version=2                            |   | file=1042   |
 *  | file=1042        the current file    |   +-------------+
 *  | live=17-20,23,31-1042                |   the current file only
 *  +--------------------------------------+
 *        ascending ranges "a-b" or single numbers "n", comma-separated: every file number
 *        the log holds up to the current one; a number not listed was retired (deleted by
 *        retention or compaction) or never used
 * </pre>
 *
 * <h2>When it is written</h2>
 * By the writer thread: at every roll, once the new file's SNAPSHOT is durable (the new file
 * added); before the writer hands a retired file to the directory to unlink or recycle (the
 * file removed: record first, unlink after); and when the writer resumes a recovered log (the
 * files recovery left). A crash between a retirement's record and its unlink leaves a file that
 * the record does not list: recovery treats it as before (a dead file whose deletion did not
 * happen). Numbers above the current one (spares, a roll cut short) are never listed.
 *
 * <h2>What an open checks</h2>
 * {@link #missing(Path)}: every file a version 2 record lists must be in the directory, so a file
 * lost in the middle of the sequence is told from one compaction deleted; with a version 1
 * record only the end is known (the highest file must reach the current one); with none, or
 * one that does not parse, nothing is checked (a log written before the record existed).
 */
public final class CurrentFileRecord {
    /** The record's file name in the log directory. */
    public static final String FILE_NAME = "CURRENT";
    /** The version this code writes. */
    static final int VERSION = 2;

    private CurrentFileRecord() {
    }

    /**
     * Records {@code current} as the writer's current file and {@code live} as the log's files,
     * durably.
     *
     * @param live ascending file numbers; those above {@code current} are left out.
     */
    public static void write(final Path directory, final long current, final long[] live) throws IOException {
        final StringBuilder text = new StringBuilder(64).append("version=").append(VERSION).append("\nfile=").append(current)
            .append("\nlive=");
        appendRanges(text, live, current);
        text.append('\n');
        final Path tmp = directory.resolve(FILE_NAME + ".tmp");
        final ByteBuffer content = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.US_ASCII));
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
     * Before recovery deletes {@code numbers} (a tail it cut, files holding no record): rewrites
     * a version 2 record without them, record first and unlink after as for a retirement, so that
     * a crash before the resumed writer records the files again does not make them "missing".
     * The current file moves down to the highest file left if it was among them. A no-op without
     * a version 2 record.
     */
    public static void forget(final Path directory, final java.util.Collection<Long> numbers) throws IOException {
        final Recorded recorded = read(directory);
        if (recorded == null || recorded.version() != VERSION || numbers.isEmpty()) {
            return;
        }
        final TreeSet<Long> live = new TreeSet<>();
        for (final long[] range : recorded.live()) {
            for (long number = range[0]; number <= range[1]; number++) {
                if (!numbers.contains(number)) {
                    live.add(number);
                }
            }
        }
        final long current = numbers.contains(recorded.current()) ? (live.isEmpty() ? 0 : live.last()) : recorded.current();
        final long[] kept = new long[live.size()];
        int i = 0;
        for (final long number : live) {
            kept[i++] = number;
        }
        write(directory, current, kept);
    }

    private static void appendRanges(final StringBuilder text, final long[] live, final long current) {
        boolean first = true;
        int i = 0;
        while (i < live.length && live[i] <= current) {
            int j = i;
            while (j + 1 < live.length && live[j + 1] == live[j] + 1 && live[j + 1] <= current) {
                j++;
            }
            if (!first) {
                text.append(',');
            }
            first = false;
            text.append(live[i]);
            if (j > i) {
                text.append('-').append(live[j]);
            }
            i = j + 1;
        }
    }

    /**
     * A record read back.
     *
     * @param version 1 or 2.
     * @param current the file the writer rolled to last.
     * @param live    with version 2 the ranges of live files, as pairs {@code [first, last]};
     *                with version 1 empty.
     */
    public record Recorded(int version, long current, List<long[]> live) {
    }

    /**
     * @return the record in {@code directory}, or null if there is none (a log written before the
     *         record existed, or never rolled) or it does not parse.
     */
    public static Recorded read(final Path directory) throws IOException {
        final String content;
        try {
            content = Files.readString(directory.resolve(FILE_NAME), StandardCharsets.US_ASCII);
        } catch (final NoSuchFileException e) {
            return null;
        }
        final String[] lines = content.strip().split("\n");
        try {
            if (lines.length == 1 && lines[0].startsWith("file=")) {
                return new Recorded(1, Long.parseLong(lines[0].substring("file=".length()).strip()), List.of());
            }
            if (lines.length == 3 && lines[0].equals("version=2") && lines[1].startsWith("file=") && lines[2].startsWith("live=")) {
                final long current = Long.parseLong(lines[1].substring("file=".length()));
                final List<long[]> live = new ArrayList<>();
                final String ranges = lines[2].substring("live=".length());
                if (!ranges.isEmpty()) {
                    for (final String range : ranges.split(",")) {
                        final int dash = range.indexOf('-');
                        final long from = Long.parseLong(dash < 0 ? range : range.substring(0, dash));
                        final long to = dash < 0 ? from : Long.parseLong(range.substring(dash + 1));
                        if (to < from) {
                            return null;
                        }
                        live.add(new long[] {from, to});
                    }
                }
                return new Recorded(2, current, live);
            }
        } catch (final NumberFormatException e) {
            return null;
        }
        return null;
    }

    /**
     * The files of {@code directory} that its record says the log holds and that are not there.
     *
     * @param first  the lowest missing file number.
     * @param count  how many are missing.
     * @param reason what was recorded and what is missing, for the exception and the WARN.
     */
    public record Missing(long first, long count, String reason) {
    }

    /**
     * @return the files missing from {@code directory} by its record, or null if none are (or
     *         there is no record to check against).
     */
    public static Missing missing(final Path directory) throws IOException {
        final Recorded recorded = read(directory);
        if (recorded == null || recorded.current() <= 0) {
            return null;
        }
        final TreeSet<Long> present = new TreeSet<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory)) {
            for (final Path file : stream) {
                final long number = LogFileDescriptor.fileNumber(file.getFileName().toString());
                if (number > 0) {
                    present.add(number);
                }
            }
        }
        if (recorded.version() == 1) {
            final long highest = present.isEmpty() ? 0 : present.last();
            if (highest >= recorded.current()) {
                return null;
            }
            return new Missing(highest + 1, recorded.current() - highest, "the last writer rolled to file " + recorded.current()
                + " (" + FILE_NAME + "), but the highest log file in the directory is " + highest + ": files " + (highest + 1) + ".."
                + recorded.current() + " are missing, with the appends acknowledged into them");
        }
        long first = 0;
        long count = 0;
        final StringBuilder listed = new StringBuilder();
        for (final long[] range : recorded.live()) {
            for (long number = range[0]; number <= range[1]; number++) {
                if (!present.contains(number)) {
                    if (first == 0) {
                        first = number;
                    }
                    if (count < 8) {
                        listed.append(count == 0 ? "" : ",").append(number);
                    } else if (count == 8) {
                        listed.append(",...");
                    }
                    count++;
                }
            }
        }
        if (count == 0) {
            return null;
        }
        return new Missing(first, count, count + " log file(s) the last writer recorded as live (" + FILE_NAME + ": current file "
            + recorded.current() + ") are missing from the directory, with the appends acknowledged into them: file(s) " + listed
            + " (no retention or compaction deleted them: the writer records a retirement before it deletes the file)");
    }
}
