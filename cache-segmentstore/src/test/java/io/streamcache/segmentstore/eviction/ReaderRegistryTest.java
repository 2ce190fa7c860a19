package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderAwarePolicy.Reader;
import io.streamcache.segmentstore.eviction.ReaderRegistry.SegmentReaders;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReaderRegistryTest {
    private final ReaderRegistry registry = new ReaderRegistry(System::nanoTime, 1);

    @Test
    void shouldCountARegistrationBehindTheFarthestReaderAsAReread() {
        registry.latestGeneration = 7;
        final Reader tail = registry.register("s", 0);
        final SegmentReaders set = registry.segments.get("s");
        assertEquals(0, set.pendingRereads, "at the tail as far as known: not a re-read");
        assertFalse(set.reread);
        tail.position(500);
        registry.register("s", 100);
        assertEquals(1, set.pendingRereads);
        assertTrue(set.reread);
        assertEquals(7, set.rereadGeneration);
        assertEquals(2, registry.readerCount("s"));
    }

    @Test
    void shouldRememberHowFarAClosedReaderReached() {
        final Reader reader = registry.register("s", 0);
        reader.position(800);
        reader.close();
        reader.close();
        final SegmentReaders set = registry.segments.get("s");
        assertEquals(0, registry.readerCount("s"));
        assertEquals(800, set.frontier);
        assertNull(registry.endedSessions.poll(), "not a re-read: nothing to learn");
        final Reader again = registry.register("s", 0);
        assertEquals(1, set.pendingRereads, "behind where the closed reader got to");
        again.position(300);
        again.close();
        assertArrayEquals(new long[] {800, 300}, registry.endedSessions.poll(), "start distance and bytes read");
    }

    @Test
    void shouldCloseTheReadersOfAForgottenSegmentAndStartItAfresh() {
        registry.register("s", 0).position(1000);
        final Reader reread = registry.register("s", 400);
        reread.position(600);
        final SegmentReaders old = registry.segments.get("s");
        registry.forget("s");
        assertTrue(reread.isClosed());
        assertTrue(old.removed);
        assertEquals(0, registry.readerCount("s"));
        assertArrayEquals(new long[] {600, 200}, registry.endedSessions.poll(), "its re-read still teaches the model");
        registry.register("s", 0);
        assertNotSame(old, registry.segments.get("s"));
        assertEquals(0, registry.segments.get("s").pendingRereads, "the history was dropped");
    }

    @Test
    void shouldRejectANegativePositionWithoutRegistering() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> registry.register("s", -1));
        assertEquals("position=-1 must be >= 0", e.getMessage());
        assertNull(registry.segments.get("s"));
    }
}
