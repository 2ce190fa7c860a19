package io.streamcache.log.internal.recovery;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TableDigestTest {
    @Test
    void shouldHashANameTheSameFromAStringAndFromItsBytesAtAnyOffset() {
        final String[] names = {"", "a", "s-1", "1234567", "12345678", "123456789", "queue-0000000042-partition-7", "naïve-€"};
        for (final String name : names) {
            final byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
            for (int at = 0; at < 9; at++) {
                final byte[] padded = new byte[at + utf8.length + 3];
                System.arraycopy(utf8, 0, padded, at, utf8.length);
                padded[padded.length - 1] = 0x55;
                assertEquals(TableDigest.nameHash(name), TableDigest.nameHash(new UnsafeBuffer(padded), at, utf8.length), name);
            }
        }
    }

    @Test
    void shouldTellNamesThatDifferInOneByteOrInLengthApart() {
        final Set<Long> hashes = new HashSet<>();
        final String[] names = {"", "a", "b", "ab", "a\0", "\0a", "s-1", "s-10", "s-01", "12345678", "12345679", "123456780",
            "1234567\0", "123456789abcdefg", "123456789abcdefh"};
        for (final String name : names) {
            assertTrue(hashes.add(TableDigest.nameHash(name)), name);
        }
    }

    @Test
    void shouldNotDependOnTheOrderOfTheSegments() {
        long forward = 0;
        long backward = 0;
        for (int id = 1; id <= 1000; id++) {
            forward += TableDigest.entry(id, id % 7 == 0, id, id * 10L, TableDigest.nameHash("s-" + id));
        }
        for (int id = 1000; id >= 1; id--) {
            backward += TableDigest.entry(id, id % 7 == 0, id, id * 10L, TableDigest.nameHash("s-" + id));
        }
        assertEquals(forward, backward);
    }

    @Test
    void shouldChangeWithEveryFieldOfAnEntry() {
        final long name = TableDigest.nameHash("a");
        final long base = TableDigest.entry(1, false, 10, 100, name);
        assertNotEquals(base, TableDigest.entry(2, false, 10, 100, name), "id");
        assertNotEquals(base, TableDigest.entry(1, true, 10, 100, name), "sealed");
        assertNotEquals(base, TableDigest.entry(1, false, 11, 100, name), "start");
        assertNotEquals(base, TableDigest.entry(1, false, 10, 101, name), "length");
        assertNotEquals(base, TableDigest.entry(1, false, 10, 100, TableDigest.nameHash("b")), "name");
        assertNotEquals(base, TableDigest.entry(1, false, 100, 10, name), "start and length swapped");
        // Two segments whose lengths moved by the same amount in opposite directions.
        final long two = TableDigest.entry(1, false, 0, 100, name) + TableDigest.entry(2, false, 0, 100, TableDigest.nameHash("b"));
        final long moved = TableDigest.entry(1, false, 0, 150, name) + TableDigest.entry(2, false, 0, 50, TableDigest.nameHash("b"));
        assertNotEquals(two, moved);
    }
}
