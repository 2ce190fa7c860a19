package io.streamcache.pravega;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.pravega.common.util.BufferView;
import io.pravega.common.util.ByteArraySegment;
import io.pravega.segmentstore.storage.CacheException;
import io.pravega.segmentstore.storage.cache.CacheFullException;
import io.pravega.segmentstore.storage.cache.CacheState;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;
import io.pravega.shared.protocol.netty.ByteBufWrapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The same seeded random sequence of operations on Pravega's {@code DirectMemoryCache} and on
 * {@link StreamcacheCacheStorage}: every result (bytes read, lengths appended, the exception
 * kind, stored and used bytes, when the cache is full) must be the same. Only valid addresses
 * are used: invalid ones are where the two differ, on purpose ({@link StreamcacheCacheStorageTest}).
 */
class CacheStorageDifferentialTest {
    private static final int BLOCK = 4096;

    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {1, 2, 3, 20261125})
    void shouldBehaveLikePravegasCacheOnARandomSequence(final long seed) {
        try (CacheStorage pravega = new DirectMemoryCache(8L << 20);
             CacheStorage ours = StreamcacheCacheStorage.create(8L << 20)) {
            final Random random = new Random(seed);
            final List<int[]> entries = new ArrayList<>(); // {pravega address, our address, length}
            int fulls = 0;
            for (int i = 0; i < 4000; i++) {
                final String where = "seed=" + seed + " op=" + i;
                final int op = random.nextInt(100);
                if (entries.isEmpty() || op < 30) {
                    final byte[] data = randomBytes(random, random.nextInt(20) == 0 ? random.nextInt(600_000) : random.nextInt(3 * BLOCK));
                    final int kind = random.nextInt(3);
                    final String p = outcome(() -> pravega.insert(view(data, kind)));
                    final String o = outcome(() -> ours.insert(view(data, kind)));
                    assertEquals(kind(p), kind(o), where + " insert length=" + data.length);
                    if (p.startsWith("ok")) {
                        entries.add(new int[] {value(p), value(o), data.length});
                    } else {
                        fulls++;
                    }
                    continue;
                }
                final int index = random.nextInt(entries.size());
                final int[] entry = entries.get(index);
                if (op < 55) {
                    final int appendable = pravega.getAppendableLength(entry[2]);
                    assertEquals(appendable, ours.getAppendableLength(entry[2]), where);
                    int length = appendable == 0 ? 0 : random.nextInt(appendable + 1);
                    int expected = entry[2];
                    final int twist = random.nextInt(20);
                    if (twist == 0) {
                        length = appendable + 1 + random.nextInt(100); // too long: IllegalArgumentException
                    } else if (twist == 1 && entry[2] % BLOCK != 0) {
                        expected = entry[2] - 1; // wrong expected length: a CacheException
                    }
                    final byte[] data = randomBytes(random, length);
                    final int expectedLength = expected;
                    final String p = outcome(() -> pravega.append(entry[0], expectedLength, new ByteArraySegment(data)));
                    final String o = outcome(() -> ours.append(entry[1], expectedLength, new ByteArraySegment(data)));
                    assertEquals(kind(p), kind(o), where + " append");
                    if (p.startsWith("ok")) {
                        assertEquals(p, o, where + " appended length");
                        entry[2] += value(p);
                    }
                } else if (op < 65) {
                    final byte[] data = randomBytes(random, random.nextInt(3 * BLOCK));
                    final String p = outcome(() -> pravega.replace(entry[0], new ByteArraySegment(data)));
                    final String o = outcome(() -> ours.replace(entry[1], new ByteArraySegment(data)));
                    assertEquals(kind(p), kind(o), where + " replace");
                    if (p.startsWith("ok")) {
                        entry[0] = value(p);
                        entry[1] = value(o);
                        entry[2] = data.length;
                    } else {
                        fulls++;
                    }
                } else if (op < 80) {
                    pravega.delete(entry[0]);
                    ours.delete(entry[1]);
                    entries.remove(index);
                } else {
                    final BufferView p = pravega.get(entry[0]);
                    final BufferView o = ours.get(entry[1]);
                    assertEquals(entry[2], p.getLength(), where);
                    assertArrayEquals(p.getCopy(), o.getCopy(), where + " get");
                    final int offset = random.nextInt(entry[2] + 1);
                    final int length = random.nextInt(entry[2] - offset + 1);
                    assertArrayEquals(p.slice(offset, length).getCopy(), o.slice(offset, length).getCopy(), where + " slice");
                }
                final CacheState ps = pravega.getState();
                final CacheState os = ours.getState();
                assertEquals(ps.getStoredBytes(), os.getStoredBytes(), where + " storedBytes");
                // DirectMemoryCache's figures, which Pravega's cache manager decides from.
                assertEquals(ps.getUsedBytes(), os.getUsedBytes(), where + " usedBytes");
                assertEquals(ps.getReservedBytes(), os.getReservedBytes(), where + " reservedBytes");
                assertEquals(ps.getAllocatedBytes(), os.getAllocatedBytes(), where + " allocatedBytes");
                assertEquals(ps.getMaxBytes(), os.getMaxBytes(), where + " maxBytes");
                assertEquals(ps.getMaxBytes(), os.getMaxBytes(), where + " maxBytes");
            }
            for (final int[] entry : entries) {
                assertArrayEquals(pravega.get(entry[0]).getCopy(), ours.get(entry[1]).getCopy());
            }
            assertTrue(fulls > 0, "the sequence should fill the cache at least once (seed=" + seed + ")");
        }
    }

    private static byte[] randomBytes(final Random random, final int length) {
        final byte[] data = new byte[length];
        random.nextBytes(data);
        return data;
    }

    /** A fresh view of the data, as Pravega would hand it over: an array, a composite or a Netty buffer. */
    private static BufferView view(final byte[] data, final int kind) {
        switch (kind) {
            case 0:
                return new ByteArraySegment(data);
            case 1:
                final int half = data.length / 2;
                return BufferView.wrap(List.of(new ByteArraySegment(data, 0, half), new ByteArraySegment(data, half, data.length - half)));
            default:
                return new ByteBufWrapper(Unpooled.wrappedBuffer(data));
        }
    }

    private interface Operation {
        int run();
    }

    private static String outcome(final Operation operation) {
        try {
            return "ok:" + operation.run();
        } catch (final CacheFullException e) {
            return "full";
        } catch (final IllegalArgumentException e) {
            return "illegal-argument";
        } catch (final CacheException e) {
            return "cache-exception";
        }
    }

    private static String kind(final String outcome) {
        return outcome.startsWith("ok") ? "ok" : outcome;
    }

    private static int value(final String outcome) {
        return Integer.parseInt(outcome.substring(3));
    }

}
