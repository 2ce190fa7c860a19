package io.streamcache.bench.sim;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Reads a recorded read trace in CSV: stateless and thread-safe.
 *
 * <p>One read a line, {@code segment,offset,length,reader}: the segment's name, the read's first
 * byte and its length in bytes, and the reader's name (empty for a read without a reader). A
 * first line starting with {@code segment} is a header and skipped; blank lines and lines
 * starting with {@code #} are ignored. A read becomes one READ event per 4 KB block it touches.
 * A segment is created on its first line; its blocks are not in the cache at the start (the trace
 * holds reads only). A named reader is registered at its first read's block (class
 * {@link Trace#RANDOM}) and never closed. Belady and LRU see the same block keys; the streaming
 * targets apply.
 */
public final class CsvTrace {
    private CsvTrace() {
    }

    /**
     * @return the trace, named after the file, at cache sizes of 1, 2, 5, 10 and 20% of its distinct blocks.
     * @throws IllegalArgumentException on a malformed line (with its number).
     */
    public static Trace read(final Path file) throws IOException {
        final String name = file.getFileName().toString();
        final Trace.Builder b = new Trace.Builder(name, "CSV trace " + name, true);
        final Map<String, Integer> segments = new HashMap<>();
        final Map<String, Integer> readers = new HashMap<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int number = 0;
            while ((line = in.readLine()) != null) {
                number++;
                final String trimmed = line.trim();
                if (trimmed.isEmpty() || trimmed.startsWith("#") || number == 1 && trimmed.toLowerCase(Locale.ROOT).startsWith("segment")) {
                    continue;
                }
                final String[] f = trimmed.split(",", -1);
                if (f.length < 3 || f.length > 4) {
                    throw new IllegalArgumentException(file + ":" + number + ": expected segment,offset,length[,reader]: " + line);
                }
                final long offset;
                final long length;
                try {
                    offset = Long.parseLong(f[1].trim());
                    length = Long.parseLong(f[2].trim());
                } catch (final NumberFormatException e) {
                    throw new IllegalArgumentException(file + ":" + number + ": offset and length must be integers: " + line, e);
                }
                if (offset < 0 || length <= 0) {
                    throw new IllegalArgumentException(file + ":" + number + ": offset must be >= 0 and length > 0: " + line);
                }
                final int segment = segments.computeIfAbsent(f[0].trim(), s -> b.createSegment());
                final String readerName = f.length == 4 ? f[3].trim() : "";
                final int first = (int) (offset / Trace.BLOCK_SIZE);
                final int last = (int) ((offset + length - 1) / Trace.BLOCK_SIZE);
                int reader = -1;
                if (!readerName.isEmpty()) {
                    final Integer known = readers.get(segment + "/" + readerName);
                    reader = known != null ? known : b.openReader(segment, first);
                    readers.put(segment + "/" + readerName, reader);
                }
                for (int block = first; block <= last; block++) {
                    b.read(segment, block, reader);
                }
            }
        }
        final int blocks = b.keyCount();
        final long[] sizes = {Math.max(1, blocks / 100), Math.max(1, blocks / 50), Math.max(1, blocks / 20), Math.max(1, blocks / 10),
            Math.max(1, blocks / 5)};
        return b.build(sizes, "1, 2, 5, 10 and 20% of the " + blocks + " distinct blocks");
    }
}
