package io.streamcache.segmentstore.eviction;

/**
 * What an {@link EvictionPolicy} sees of one cached range of a segment, read and stamped
 * under the lock of the entry's segment: where it lies and the
 * generation stamp the policy keeps in it. The store owns the entry; a policy reads it and
 * may change only its stamp, and only where {@link EvictionPolicy} says so.
 *
 * <p><b>Threading:</b> read and stamped under the lock of the entry's segment (the callers of
 * {@link EvictionPolicy} hold it or hold the manager's pass lock, as that interface says).
 */
public interface CachedEntry {
    /**
     * @return the segment offset of the range's first byte.
     */
    long offset();

    /**
     * @return the range's length in bytes.
     */
    int length();

    /**
     * @return the offset just after the range: {@code offset() + length()}.
     */
    long endOffset();

    /**
     * @return the policy's stamp: by default the manager generation of the entry's last use.
     */
    int generation();

    /**
     * @param generation the new stamp.
     */
    void generation(int generation);
}
