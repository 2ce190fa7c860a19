package io.streamcache.log;

/**
 * JMX view of a store's historical reads, registered as
 * {@code io.streamcache:type=HistoricalReads,name=<store name>} while the reader is open
 * (unregistered when it closes): callable from any thread; each attribute reads a fresh
 * {@link HistoricalReadStats}.
 */
public interface HistoricalReadMXBean {
    String getName();

    /** @return ranges read from the log files. */
    long getRangesRead();

    /** @return calls that joined a range read already in flight. */
    long getJoins();

    long getFileReads();

    long getBytesRead();

    /** @return range reads that failed (a missing file, a record that no longer validates). */
    long getFailures();

    long getFillFailures();

    /** @return ranges being read now. */
    int getInFlight();

    /** @return reads waiting for a reading thread now. */
    int getQueued();
}
