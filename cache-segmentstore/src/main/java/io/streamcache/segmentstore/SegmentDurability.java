package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogRequest;

/**
 * What the durability layer keeps of one segment of a store with a log, beside the segment's own
 * state (bounds, index, seal), which only changes once the log made a change durable: the end of
 * the offsets handed to appends still on their way through the log, the segment's requests in
 * flight and the writer epoch they were admitted in, a SEAL or a DELETE in flight.
 * {@link DurableSegmentTable} makes one per segment, under the segment's lock, the first time it
 * logs a change of it or checks one, and is the only class that changes it ({@link WaitingReads}
 * reads the reserved end through {@link DurableSegmentTable#reservedLength}).
 *
 * <p><b>Threading:</b> not thread-safe on its own: every field is guarded by its segment's lock
 * ({@link SegmentLock}), held by the producer that reserves and submits and by the writer's
 * completion thread that applies the outcome. The guard is stated here rather than with
 * {@code @GuardedBy}: Error Prone's checker knows monitors and {@code java.util.concurrent.locks.Lock}
 * only, and a segment is its own lock without being either (see {@link SegmentLock} for why).
 *
 * <p><b>Heap:</b> one object per segment a durable store has changed or recovered and then
 * changed (40 bytes with compressed oops: header, two {@code long}s, an {@code int}, a reference
 * and a {@code boolean}); a store without a log makes none.
 */
final class SegmentDurability {
    /** The offset the next append gets: the segment's length plus the appends in flight. */
    private long reservedLength;
    /** Requests of this segment submitted and not completed. */
    private int inFlight;
    /** The writer epoch the in-flight requests were admitted in. */
    private long inFlightEpoch;
    /** The SEAL request in flight, or null; appends are refused while it is set. */
    private LogRequest sealRequest;
    /** A DELETE request is in flight; appends and other changes are refused. */
    private boolean deleting;

    /** @param length the segment's length now: with nothing in flight, every offset below it is durable. */
    SegmentDurability(final long length) {
        this.reservedLength = length;
    }

    long reservedLength() {
        return reservedLength;
    }

    /** @return the SEAL in flight, or null. */
    LogRequest sealRequest() {
        return sealRequest;
    }

    boolean deleting() {
        return deleting;
    }

    int inFlight() {
        return inFlight;
    }

    /** @return whether requests admitted in a writer epoch other than {@code epoch} are still in flight. */
    boolean inFlightBefore(final long epoch) {
        return inFlight > 0 && inFlightEpoch != epoch;
    }

    /** A request (CREATE or TRUNCATE) was queued in {@code epoch}. */
    void submitted(final long epoch) {
        inFlight++;
        inFlightEpoch = epoch;
    }

    /** An append ending at {@code end} was queued in {@code epoch}: the offsets below {@code end} are taken. */
    void appendSubmitted(final long end, final long epoch) {
        reservedLength = end;
        submitted(epoch);
    }

    /** The SEAL {@code request} was queued in {@code epoch}. */
    void sealSubmitted(final LogRequest request, final long epoch) {
        sealRequest = request;
        submitted(epoch);
    }

    /** A DELETE was queued in {@code epoch}. */
    void deleteSubmitted(final long epoch) {
        deleting = true;
        submitted(epoch);
    }

    /** One request completed, durable or failed. */
    void completed() {
        inFlight--;
    }

    /** The SEAL in flight completed, durable or failed. */
    void sealDone() {
        sealRequest = null;
    }

    /**
     * An append at {@code offset} failed: the offsets from it on are given back (every later
     * request of the segment fails too: same epoch, later in the log).
     */
    void appendFailed(final long offset) {
        if (reservedLength > offset) {
            reservedLength = offset;
        }
    }

    /** The DELETE in flight failed: the segment takes changes again. */
    void deleteFailed() {
        deleting = false;
    }
}
