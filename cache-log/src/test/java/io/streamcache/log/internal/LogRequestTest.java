package io.streamcache.log.internal;

import io.streamcache.log.LogFailedException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A log request on its own: what it keeps of what the producer gave it, the data it drops once
 * complete, and the hand-off link to the completion thread.
 */
class LogRequestTest {
    @Test
    void aDataRequestKeepsTheLengthOfTheReadableBytesItWasGiven() {
        final ByteBuf data = Unpooled.wrappedBuffer(new byte[100]);
        data.readerIndex(30);
        final Object attachment = new Object();
        final LogRequest request = new LogRequest(LogRecordDescriptor.TYPE_DATA, 5, 1000, data, null, attachment, 3);
        assertEquals(LogRecordDescriptor.TYPE_DATA, request.type());
        assertEquals(5, request.segmentId());
        assertEquals(1000, request.segmentOffset());
        assertSame(data, request.data());
        assertEquals(70, request.length());
        assertSame(attachment, request.attachment());
        assertEquals(3, request.epoch);
        assertNull(request.nameBytes());
        data.readerIndex(100);
        assertEquals(70, request.length(), "taken when the request was made");
    }

    @Test
    void aRequestWithoutDataHasLengthZero() {
        final byte[] name = "orders".getBytes(StandardCharsets.UTF_8);
        final LogRequest request = new LogRequest(LogRecordDescriptor.TYPE_CREATE, 5, 0, null, name, null, 0);
        assertEquals(0, request.length());
        assertNull(request.data());
        assertArrayEquals(name, request.nameBytes());
        assertNull(request.attachment());
    }

    @Test
    void droppingTheDataKeepsItsLength() {
        final LogRequest request = new LogRequest(LogRecordDescriptor.TYPE_DATA, 1, 0, Unpooled.wrappedBuffer(new byte[8]), null, null, 0);
        request.dropData();
        assertNull(request.data());
        assertEquals(8, request.length());
    }

    @Test
    void theHandOffLinksRequestsInOrderUntilCleared() {
        final LogRequest a = new LogRequest(LogRecordDescriptor.TYPE_SEAL, 1, 10, null, null, null, 0);
        final LogRequest b = new LogRequest(LogRecordDescriptor.TYPE_SEAL, 2, 20, null, null, null, 0);
        final LogRequest c = new LogRequest(LogRecordDescriptor.TYPE_SEAL, 3, 30, null, null, null, 0);
        assertNull(a.handoffNextAcquire());
        a.handoffNextRelease(b);
        b.handoffNextRelease(c);
        assertSame(b, a.handoffNextAcquire());
        assertSame(c, a.handoffNextAcquire().handoffNextAcquire());
        assertNull(c.handoffNextAcquire());
        a.clearHandoffNext();
        assertNull(a.handoffNextAcquire());
        assertSame(c, b.handoffNextAcquire(), "clearing one link leaves the others");
        assertNull(a.next, "the writer's pending link is a separate field");
    }

    @Test
    void theFutureIsTheRequestAndToStringShowsItsState() {
        final LogRequest request = new LogRequest(LogRecordDescriptor.TYPE_TRUNCATE, 4, 64, null, null, null, 0);
        assertFalse(request.isDone());
        assertTrue(request.toString().contains("pending"), request.toString());
        request.complete(request.segmentOffset());
        assertEquals(64L, request.join());
        assertTrue(request.toString().contains("done"), request.toString());
        final LogRequest failed = new LogRequest(LogRecordDescriptor.TYPE_DELETE, 4, 0, null, null, null, 0);
        failed.completeExceptionally(new LogFailedException("disk", null));
        assertTrue(failed.toString().contains("failed"), failed.toString());
    }
}
