package io.streamcache.bench.scale;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HeapFootprintTest {
    private static long field(final String line, final String name) {
        final Matcher m = Pattern.compile("\"" + name + "\": (-?\\d+)").matcher(line);
        assertTrue(m.find(), name + " in " + line);
        return Long.parseLong(m.group(1));
    }

    @Test
    void shouldFillTheCacheAndTheStoreAndReportTheirHeap() {
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        assertEquals(0, HeapFootprint.run(new String[] {"--cache-size", "16m", "--segments", "20"},
            new PrintStream(console, true, StandardCharsets.UTF_8)));
        final String[] lines = console.toString(StandardCharsets.UTF_8).trim().split("\n");
        assertEquals(2, lines.length, String.join("\n", lines));

        final String cache = lines[0];
        assertTrue(cache.startsWith("{\"what\": \"cache\", \"cacheSize\": 16777216"), cache);
        // 97% of the data blocks in 10 KB entries (3 blocks each): 8 buffers of 511 blocks.
        assertEquals(8 * 511 / 3 * 97 / 100, field(cache, "entries"), cache);
        assertEquals(field(cache, "entries") * HeapFootprint.ENTRY_LENGTH, field(cache, "cachedBytes"), cache);
        assertEquals(16 + 4 * field(cache, "entries"), field(cache, "callerIndexBytes"), cache);

        final String store = lines[1];
        assertTrue(store.startsWith("{\"what\": \"store\", \"cacheSize\": 16777216, \"segments\": 20"), store);
        // Filled until the manager's target (0.85) less 0.02, or its first eviction: most of the 16 MB.
        assertTrue(field(store, "cachedBytes") > 8L << 20, store);
        assertTrue(field(store, "entries") >= 20, "every segment holds an entry: " + store);
        assertTrue(store.contains("\"heapBytesPerCachedMB\": ") && store.contains("\"heapBytesPerSegmentEmpty\": "), store);
    }

    @Test
    void shouldRejectBadFlags() {
        for (final String[] args : new String[][] {{"--bogus", "1"}, {"--what", "everything"}, {"--segments", "0"}, {"--cache-size"}}) {
            final ByteArrayOutputStream console = new ByteArrayOutputStream();
            assertEquals(2, HeapFootprint.run(args, new PrintStream(console, true, StandardCharsets.UTF_8)), String.join(" ", args));
            assertTrue(console.toString(StandardCharsets.UTF_8).startsWith("heapfootprint: "), console.toString(StandardCharsets.UTF_8));
        }
    }
}
