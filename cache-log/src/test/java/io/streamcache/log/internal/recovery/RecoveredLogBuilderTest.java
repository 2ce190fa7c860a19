package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecoveredLogBuilderTest {
    @Test
    void shouldDescribeAnEmptyLogThatStartsFileOne() {
        final RecoveredLog log = RecoveredLog.empty();
        assertTrue(log.segments().isEmpty());
        assertTrue(log.files().isEmpty());
        assertFalse(log.hasTail());
        assertEquals(1, log.nextSegmentId());
        assertEquals(1, log.nextFileNumber());
    }

    @Test
    void shouldCarryHandMadeSegmentsFilesAndTail() {
        final long tail = LogFileDescriptor.FIRST_RECORD_POSITION + 4096 + 24;
        final RecoveredLog log = RecoveredLog.builder()
            .segment(3, "three", 100, 500, true)
            .segment(9, "nine", 0, 0, false)
            .fileData(2, 3, 300)
            .fileData(2, 3, 250)
            .fileData(4, 3, 500)
            .file(5)
            .tail(5, tail)
            .nextSegmentId(7)
            .build();
        assertEquals(List.of("three", "nine"), log.liveSegments().stream().map(RecoveredSegment::name).toList());
        final RecoveredSegment three = log.liveSegments().get(0);
        assertEquals(3, three.id());
        assertEquals(100, three.startOffset());
        assertEquals(500, three.length());
        assertTrue(three.sealed());
        assertEquals(List.of(2L, 4L, 5L), log.files().stream().map(RecoveredFile::fileNumber).toList());
        assertEquals(Map.of(3, 300L), log.files().get(0).dataEnds(), "the highest end per segment");
        assertTrue(log.hasTail());
        assertEquals(5, log.tailFileNumber());
        assertEquals(tail, log.tailEndPosition());
        assertEquals(10, log.nextSegmentId(), "above every restored id, at least what was set");
        assertEquals(6, log.nextFileNumber());
    }

    @Test
    void shouldRejectBadInputNamingTheValues() {
        final RecoveredLog.Builder builder = RecoveredLog.builder();
        final IllegalArgumentException bounds = assertThrows(IllegalArgumentException.class,
            () -> builder.segment(1, "a", 10, 5, false));
        assertTrue(bounds.getMessage().contains("startOffset=10") && bounds.getMessage().contains("length=5"), bounds.getMessage());
        assertThrows(IllegalArgumentException.class, () -> builder.segment(0, "a", 0, 0, false));
        final IllegalArgumentException position = assertThrows(IllegalArgumentException.class, () -> builder.tail(1, 13));
        assertTrue(position.getMessage().contains("position=13"), position.getMessage());
        assertThrows(IllegalArgumentException.class, () -> builder.nextSegmentId(0));
        assertTrue(builder.build().segments().isEmpty(), "nothing changed");
    }
}
