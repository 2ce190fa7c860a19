package io.streamcache.bench.stress;

/**
 * One second of a stress run, as printed on the progress line and charted in the report; an
 * immutable value. Rates are over the interval; latencies in microseconds over the interval;
 * {@code hitRatio} and {@code bytesVerified} are cumulative.
 *
 * @param elapsedSeconds    seconds since the start, at the end of the interval.
 * @param appendOpsPerSec   appends completed per second.
 * @param appendMBps        appended MB (10^6 bytes) per second.
 * @param readOpsPerSec     reads (tail and catch-up) that returned bytes, per second.
 * @param readMBps          MB read per second.
 * @param appendP50Micros   append latency, median.
 * @param appendP99Micros   append latency, 99th percentile.
 * @param appendMaxMicros   append latency, maximum.
 * @param tailP99Micros     tail read latency, 99th percentile.
 * @param catchupP99Micros  catch-up read latency, 99th percentile.
 * @param cacheUtilization  used cache blocks / all, at the end of the interval.
 * @param hitRatio          reads served from the cache / all reads, since the start.
 * @param bytesVerified     bytes read and verified since the start.
 * @param tailLagBytes      tail readers: acknowledged bytes not yet read, mean over the followed segments, at the end of the interval.
 * @param tailLagMaxBytes   tail readers: the same, the largest.
 * @param tailLagSeconds    {@code tailLagBytes} in time: divided by one segment's append rate over the interval.
 * @param catchupLagBytes   catch-up readers: bytes between their position and their segment's acknowledged end, mean.
 * @param catchupLagMaxBytes catch-up readers: the same, the largest.
 * @param catchupLagSeconds {@code catchupLagBytes} in time, as for the tail readers.
 * @param diskBytes         bytes of the files in the log directory, at the end of the interval.
 */
record Sample(
    double elapsedSeconds,
    double appendOpsPerSec,
    double appendMBps,
    double readOpsPerSec,
    double readMBps,
    double appendP50Micros,
    double appendP99Micros,
    double appendMaxMicros,
    double tailP99Micros,
    double catchupP99Micros,
    double cacheUtilization,
    double hitRatio,
    long bytesVerified,
    long tailLagBytes,
    long tailLagMaxBytes,
    double tailLagSeconds,
    long catchupLagBytes,
    long catchupLagMaxBytes,
    double catchupLagSeconds,
    long diskBytes) {
}
