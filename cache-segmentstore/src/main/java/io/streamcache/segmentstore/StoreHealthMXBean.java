package io.streamcache.segmentstore;

/**
 * A segment store's health as an MXBean, registered as
 * {@code io.streamcache:type=Health,name="<store name>"} (the name quoted) while the store is open: thread-safe
 * (each read evaluates {@link SegmentStore#health()}, which takes no lock of the data path).
 */
public interface StoreHealthMXBean {
    /**
     * @return {@code HEALTHY}, {@code DEGRADED} or {@code FAILED} ({@link StoreHealth.State}).
     */
    String getState();

    /**
     * @return the state and its issues on one line ({@link StoreHealth#summary()}).
     */
    String getSummary();

    /**
     * @return the reasons of the issues now, worst first ({@link StoreHealth.Reason} names).
     */
    String[] getReasons();
}
