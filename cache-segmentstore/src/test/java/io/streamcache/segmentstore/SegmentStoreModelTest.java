package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments.EntryView;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The store against a reference model: per segment a byte array and the list of index entries
 * the growth rule must produce, with cached flags and pin counts. Random creates, appends, reads
 * (some results held open, pinning), waiting reads, truncates, seals, deletes, durability marks,
 * forced evictions of random subsets (adjacent evicted entries coalesce into one placeholder) and fills of evicted
 * ranges (cut into cached entries of at most the maximum entry length); after every step the store's bounds, index entries,
 * pins and cache entry count must match the model, and every read must return the model's bytes
 * or stop with NOT_CACHED exactly where the model says the bytes were evicted. Every view read is
 * repeated as a copying read, which must give the same status and bytes.
 */
class SegmentStoreModelTest {
    private static final String[] NAMES = {"alpha", "beta", "gamma"};
    private static final int OPERATIONS = 15_000;

    /** One index entry as the model expects it. */
    private static final class ModelEntry {
        final long offset;
        int length;
        boolean cached = true;
        int pins;
        boolean retired;

        ModelEntry(final long offset, final int length) {
            this.offset = offset;
            this.length = length;
        }

        long end() {
            return offset + length;
        }

        EntryView view() {
            return new EntryView(offset, length, cached, pins);
        }
    }

    /** One segment as the model expects it. */
    private static final class ModelSegment {
        final String name;
        boolean exists;
        long seed;
        long start;
        long length;
        long durable;
        boolean sealed;
        final List<ModelEntry> entries = new ArrayList<>();

        ModelSegment(final String name) {
            this.name = name;
        }

        SegmentInfo info() {
            return new SegmentInfo(name, start, length, durable, sealed);
        }

        ModelEntry containing(final long offset) {
            for (final ModelEntry entry : entries) {
                if (offset >= entry.offset && offset < entry.end()) {
                    return entry;
                }
            }
            return null;
        }
    }

    /** A result held open, with what it must keep showing and the entries it pins. */
    private record Held(ReadResult result, byte[] expected, List<ModelEntry> pinned) {
    }

    /** A waiting read not yet completed. */
    private record Pending(ModelSegment segment, long seed, long offset, int maxLength, CompletableFuture<ReadResult> future) {
    }

    private final List<ModelEntry> retiredPinned = new ArrayList<>();
    private final List<Held> held = new ArrayList<>();
    private final List<Pending> pending = new ArrayList<>();
    private BlockCache cache;
    private SegmentStore store;
    private OffsetSelectingPolicy policy;
    private int maxEntry;
    private boolean appendsDurable;
    private int incarnations;
    /** Copying reads made: rotates their kind of destination. */
    private int copies;
    /** What the run exercised, so that a change that makes it trivial shows. */
    private int notCachedReads;
    private int deferredFrees;
    private int wokenWaiters;
    private int evictedEntries;
    private long filledBytes;

    @ParameterizedTest(name = "seed={0} maxEntry={1} appendsDurable={2}")
    @CsvSource({"1, 300, true", "2, 300, false", "3, 1000, true", "4, 97, false", "5, 4096, true"})
    void shouldMatchTheModel(final long seed, final int maxEntryLength, final boolean durable) throws Exception {
        maxEntry = maxEntryLength;
        appendsDurable = durable;
        cache = TestSegments.cache(8L << 20);
        policy = new OffsetSelectingPolicy();
        store = SegmentStore.builder(cache).maxIndexEntryLength(maxEntry).appendsDurable(durable)
            .cacheManager(TestSegments.manualManager(cache).policy(policy)).build();
        try {
            run(new Random(seed));
        } finally {
            for (final Held h : held) {
                h.result().release();
            }
            store.close();
            cache.close();
        }
    }

    private void run(final Random random) throws Exception {
        final ModelSegment[] segments = new ModelSegment[NAMES.length];
        for (int i = 0; i < NAMES.length; i++) {
            segments[i] = new ModelSegment(NAMES[i]);
        }
        for (int op = 0; op < OPERATIONS; op++) {
            final ModelSegment segment = segments[random.nextInt(segments.length)];
            final int choice = random.nextInt(100);
            final String step = "op=" + op + " choice=" + choice + " segment=" + segment.name;
            if (!segment.exists) {
                if (choice < 90) {
                    create(segment);
                } else {
                    assertThrows(SegmentNotFoundException.class, () -> store.append(segment.name, buffer(1, 0, 1)), step);
                    assertThrows(SegmentNotFoundException.class, () -> store.read(segment.name, 0, 1), step);
                }
            } else if (choice < 35) {
                append(segment, random);
            } else if (choice < 60) {
                read(segment, random);
            } else if (choice < 66) {
                waitRead(segment, random);
            } else if (choice < 72) {
                truncate(segment, random);
            } else if (choice < 78) {
                evict(segments, random);
            } else if (choice < 83) {
                releaseOne(random);
            } else if (choice < 86) {
                markDurable(segment, random);
            } else if (choice < 88) {
                fill(segment, random);
            } else if (choice < 91) {
                seal(segment);
            } else if (choice < 93) {
                delete(segment);
            } else {
                assertThrows(SegmentExistsException.class, () -> store.create(segment.name), step);
            }
            checkPending(step);
            check(segments, step);
        }
        while (!held.isEmpty()) {
            releaseOne(random);
        }
        for (final ModelSegment segment : segments) {
            if (segment.exists) {
                delete(segment);
            }
        }
        check(segments, "end");
        assertTrue(notCachedReads > 0 && deferredFrees > 0 && wokenWaiters > 0 && evictedEntries > 0 && filledBytes > 0,
            "notCachedReads=" + notCachedReads + " deferredFrees=" + deferredFrees + " wokenWaiters=" + wokenWaiters
                + " evictedEntries=" + evictedEntries + " filledBytes=" + filledBytes);
        assertEquals(0, cache.stats().entryCount(), "everything freed");
        assertEquals(0, cache.stats().storedBytes());
    }

    // ------------------------------------------------------------------------------------------
    // Operations, each applied to the store and the model

    private void create(final ModelSegment segment) {
        store.create(segment.name);
        segment.exists = true;
        segment.seed = ++incarnations * 7919L;
        segment.start = 0;
        segment.length = 0;
        segment.durable = 0;
        segment.sealed = false;
        segment.entries.clear();
    }

    private void append(final ModelSegment segment, final Random random) {
        final int length = random.nextInt(10) == 0 ? 0 : 1 + random.nextInt(random.nextBoolean() ? 100 : 2 * maxEntry);
        if (segment.sealed) {
            assertThrows(SegmentSealedException.class, () -> store.append(segment.name, buffer(segment.seed, segment.length, length)));
            return;
        }
        assertEquals(segment.length, store.append(segment.name, buffer(segment.seed, segment.length, length)));
        long position = segment.length;
        int remaining = length;
        final ModelEntry last = segment.entries.isEmpty() ? null : segment.entries.get(segment.entries.size() - 1);
        if (remaining > 0 && last != null && last.cached && last.end() == position && last.length < maxEntry) {
            final int n = Math.min(remaining, maxEntry - last.length);
            last.length += n;
            position += n;
            remaining -= n;
        }
        while (remaining > 0) {
            final int n = Math.min(remaining, maxEntry);
            segment.entries.add(new ModelEntry(position, n));
            position += n;
            remaining -= n;
        }
        segment.length = position;
        if (appendsDurable) {
            segment.durable = position;
        }
    }

    private void read(final ModelSegment segment, final Random random) {
        final long offset = Math.max(0, segment.start - 20 + (long) random.nextInt((int) (segment.length - segment.start) + 60));
        final int maxLength = random.nextInt(8) == 0 ? 0 : random.nextInt(3 * maxEntry);
        if (offset < segment.start) {
            final SegmentTruncatedException e = assertThrows(SegmentTruncatedException.class, () -> store.read(segment.name, offset, maxLength));
            assertEquals(segment.start, e.startOffset());
            final ByteBuf destination = Unpooled.buffer(maxLength + 1, maxLength + 1).writerIndex(1);
            assertThrows(SegmentTruncatedException.class, () -> store.read(segment.name, offset, destination));
            assertEquals(1, destination.writerIndex(), "a refused copying read leaves the destination alone");
            return;
        }
        final ReadResult result = store.read(segment.name, offset, maxLength);
        final List<ModelEntry> covered = new ArrayList<>();
        final ReadStatus expectedStatus = expectRead(segment, offset, maxLength, covered);
        final long end = covered.isEmpty() ? offset : Math.min(offset + maxLength, covered.get(covered.size() - 1).end());
        final String what = "read " + segment.name + " offset=" + offset + " maxLength=" + maxLength;
        assertEquals(expectedStatus, result.status(), what);
        assertEquals(end, result.nextOffset(), what);
        final byte[] expected = TestSegments.pattern(segment.seed, offset, (int) (end - offset));
        assertArrayEquals(expected, bytes(result), what);
        assertEquals(covered.size(), result.viewCount(), what);
        copy(segment, offset, maxLength, expectedStatus, expected, what);
        if (expectedStatus == ReadStatus.NOT_CACHED) {
            notCachedReads++;
        }
        if (!covered.isEmpty() && random.nextInt(4) == 0) {
            for (final ModelEntry entry : covered) {
                entry.pins++;
            }
            held.add(new Held(result, expected, covered));
        } else {
            result.release();
        }
    }

    /**
     * The copying read with the view read's arguments, into a destination of room
     * {@code maxLength}: the same status and bytes; the kind of destination and the index it
     * starts at rotate (without drawing from the run's random sequence).
     */
    private void copy(final ModelSegment segment, final long offset, final int maxLength, final ReadStatus expectedStatus,
                      final byte[] expected, final String what) {
        final int kind = copies++ & 3;
        final int from = copies % 5;
        final int capacity = from + maxLength;
        final ReadStatus status;
        final byte[] got;
        if (kind < 2) {
            final ByteBuf destination = kind == 0 ? Unpooled.buffer(capacity, capacity) : Unpooled.directBuffer(capacity, capacity);
            try {
                destination.writerIndex(from);
                status = store.read(segment.name, offset, destination);
                assertEquals(from + expected.length, destination.writerIndex(), "copying " + what);
                got = ByteBufUtil.getBytes(destination, from, expected.length);
            } finally {
                destination.release();
            }
        } else {
            final ByteBuffer destination = kind == 2 ? ByteBuffer.allocate(capacity + 1) : ByteBuffer.allocateDirect(capacity + 1);
            destination.position(from).limit(capacity);
            status = store.read(segment.name, offset, destination);
            assertEquals(from + expected.length, destination.position(), "copying " + what);
            assertEquals(capacity, destination.limit(), "copying " + what);
            got = new byte[expected.length];
            destination.position(from);
            destination.get(got);
        }
        assertEquals(expectedStatus, status, "copying " + what);
        assertArrayEquals(expected, got, "copying " + what);
    }

    /**
     * @param covered filled with the entries the read returns bytes from.
     * @return the status the model expects.
     */
    private static ReadStatus expectRead(final ModelSegment segment, final long offset, final int maxLength, final List<ModelEntry> covered) {
        final ReadStatus atEnd = segment.sealed ? ReadStatus.SEALED_END : ReadStatus.END_OF_DATA;
        if (offset >= segment.length) {
            return atEnd;
        }
        final long end = offset + Math.min(maxLength, segment.length - offset);
        long position = offset;
        while (position < end) {
            final ModelEntry entry = segment.containing(position);
            if (entry == null || !entry.cached) {
                return ReadStatus.NOT_CACHED;
            }
            covered.add(entry);
            position = Math.min(end, entry.end());
        }
        return position == segment.length ? atEnd : ReadStatus.MAX_LENGTH;
    }

    private void waitRead(final ModelSegment segment, final Random random) {
        final long offset = segment.length + random.nextInt(3) * (long) random.nextInt(50);
        final int maxLength = 1 + random.nextInt(2 * maxEntry);
        final CompletableFuture<ReadResult> future = store.readOrWait(segment.name, offset, maxLength, Duration.ofMinutes(10));
        if (segment.sealed) {
            assertTrue(future.isDone());
            assertEquals(ReadStatus.SEALED_END, future.join().status());
            return;
        }
        assertFalse(future.isDone(), "nothing at offset=" + offset + " yet");
        pending.add(new Pending(segment, segment.seed, offset, maxLength, future));
    }

    private void checkPending(final String step) throws Exception {
        for (final Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
            final Pending p = it.next();
            final ModelSegment segment = p.segment();
            final boolean sameIncarnation = segment.exists && segment.seed == p.seed();
            if (sameIncarnation && !segment.sealed && p.offset() >= segment.length) {
                assertFalse(p.future().isDone(), step + ": waiter at offset=" + p.offset() + " woken early");
                continue;
            }
            assertTrue(p.future().isDone(), step + ": waiter at offset=" + p.offset() + " not woken");
            it.remove();
            wokenWaiters++;
            if (!sameIncarnation) {
                final ExecutionException e = assertThrows(ExecutionException.class, () -> p.future().get());
                assertInstanceOf(SegmentNotFoundException.class, e.getCause(), step);
                continue;
            }
            try (ReadResult result = p.future().get()) {
                if (p.offset() >= segment.length) {
                    assertEquals(ReadStatus.SEALED_END, result.status(), step);
                    assertEquals(0, result.length());
                } else {
                    assertNotEquals(ReadStatus.TIMED_OUT, result.status(), step);
                    assertTrue(result.length() > 0, step + ": woken with bytes");
                    assertArrayEquals(TestSegments.pattern(p.seed(), p.offset(), result.length()), bytes(result), step);
                }
            }
        }
    }

    private void truncate(final ModelSegment segment, final Random random) {
        final long offset = segment.start + (long) random.nextInt((int) (segment.length - segment.start) + 1) - (random.nextInt(5) == 0 ? 10 : 0);
        if (offset < 0) {
            assertThrows(IllegalArgumentException.class, () -> store.truncate(segment.name, offset));
            return;
        }
        store.truncate(segment.name, offset);
        if (offset <= segment.start) {
            return;
        }
        segment.start = offset;
        for (final Iterator<ModelEntry> it = segment.entries.iterator(); it.hasNext(); ) {
            final ModelEntry entry = it.next();
            if (entry.end() > offset) {
                break;
            }
            it.remove();
            retire(entry);
        }
    }

    private void retire(final ModelEntry entry) {
        entry.retired = true;
        if (entry.pins > 0 && entry.cached) {
            retiredPinned.add(entry);
        }
    }

    private void evict(final ModelSegment[] segments, final Random random) {
        final long salt = random.nextLong();
        final int modulus = 1 + random.nextInt(3);
        policy.select((name, entry) -> Math.floorMod(salt ^ (name.hashCode() * 31L + entry.offset()) * 0x9E37_79B9_7F4A_7C15L, modulus) == 0);
        store.cacheManager().evictDownTo(0.0);
        for (final ModelSegment segment : segments) {
            if (!segment.exists) {
                continue;
            }
            for (final ModelEntry entry : segment.entries) {
                if (entry.cached && entry.pins == 0 && entry.end() <= segment.durable
                    && Math.floorMod(salt ^ (segment.name.hashCode() * 31L + entry.offset) * 0x9E37_79B9_7F4A_7C15L, modulus) == 0) {
                    entry.cached = false;
                    evictedEntries++;
                }
            }
            coalesce(segment);
        }
    }

    /** Adjacent placeholders (evicted entries) become one: the earlier grows, the later goes. */
    private static void coalesce(final ModelSegment segment) {
        for (int i = segment.entries.size() - 1; i > 0; i--) {
            final ModelEntry before = segment.entries.get(i - 1);
            final ModelEntry after = segment.entries.get(i);
            if (!before.cached && !after.cached && before.end() == after.offset) {
                before.length += after.length;
                segment.entries.remove(i);
            }
        }
    }

    private void releaseOne(final Random random) {
        if (held.isEmpty()) {
            return;
        }
        final Held h = held.remove(random.nextInt(held.size()));
        assertArrayEquals(h.expected(), bytes(h.result()), "a pinned result keeps its bytes until released");
        h.result().release();
        for (final ModelEntry entry : h.pinned()) {
            entry.pins--;
            if (entry.pins == 0 && retiredPinned.remove(entry)) {
                deferredFrees++;
            }
        }
    }

    private void fill(final ModelSegment segment, final Random random) {
        final long from = Math.max(0, segment.start - 10 + (long) random.nextInt((int) (segment.length - segment.start) + 11));
        final int length = (int) Math.min(segment.length - from, random.nextInt(3 * maxEntry));
        long expected = 0;
        for (int i = 0; i < segment.entries.size(); i++) {
            final ModelEntry entry = segment.entries.get(i);
            final long pieceStart = Math.max(Math.max(from, segment.start), entry.offset);
            final long pieceEnd = Math.min(from + length, entry.end());
            if (entry.cached || pieceStart >= pieceEnd) {
                continue;
            }
            final List<ModelEntry> pieces = new ArrayList<>();
            if (entry.offset < pieceStart) {
                final ModelEntry before = new ModelEntry(entry.offset, (int) (pieceStart - entry.offset));
                before.cached = false;
                pieces.add(before);
            }
            // Cached pieces of at most maxEntry bytes: a coalesced placeholder may be longer.
            for (long p = pieceStart; p < pieceEnd; p += maxEntry) {
                pieces.add(new ModelEntry(p, (int) Math.min(maxEntry, pieceEnd - p)));
            }
            if (pieceEnd < entry.end()) {
                final ModelEntry after = new ModelEntry(pieceEnd, (int) (entry.end() - pieceEnd));
                after.cached = false;
                pieces.add(after);
            }
            segment.entries.remove(i);
            segment.entries.addAll(i, pieces);
            i += pieces.size() - 1;
            expected += pieceEnd - pieceStart;
        }
        assertEquals(expected, store.fill(segment.name, from, buffer(segment.seed, from, length)), "fill from=" + from);
        filledBytes += expected;
    }

    private void markDurable(final ModelSegment segment, final Random random) {
        final long offset = segment.durable + (long) random.nextInt((int) (segment.length - segment.durable) + 1);
        store.markDurable(segment.name, offset);
        segment.durable = Math.max(segment.durable, offset);
    }

    private void seal(final ModelSegment segment) {
        assertEquals(segment.length, store.seal(segment.name));
        segment.sealed = true;
    }

    private void delete(final ModelSegment segment) {
        store.delete(segment.name);
        segment.exists = false;
        for (final ModelEntry entry : segment.entries) {
            retire(entry);
        }
        segment.entries.clear();
    }

    // ------------------------------------------------------------------------------------------
    // The check after every step

    private void check(final ModelSegment[] segments, final String step) {
        long cachedEntries = 0;
        for (final ModelSegment segment : segments) {
            if (!segment.exists) {
                assertFalse(store.exists(segment.name), step);
                continue;
            }
            assertEquals(segment.info(), store.info(segment.name), step);
            final List<EntryView> expected = segment.entries.stream().map(ModelEntry::view).toList();
            final List<EntryView> actual = entries(store, segment.name);
            if (!expected.equals(actual)) {
                fail(step + ": entries of " + segment.name + "\n expected " + expected + "\n actual   " + actual);
            }
            cachedEntries += segment.entries.stream().filter(e -> e.cached).count();
        }
        cachedEntries += retiredPinned.size();
        assertEquals(cachedEntries, cache.stats().entryCount(), step + ": cache entries (a leak, or a premature free)");
        if (Arrays.asList(segments).stream().noneMatch(s -> s.exists) && held.isEmpty()) {
            assertEquals(0, cache.stats().storedBytes(), step);
        }
    }
}
