package io.streamcache.core.memory;

import java.nio.ByteBuffer;

/**
 * Memory that holds the buffers of a cache, built and closed by one thread and read from any
 * thread in between: a fixed number of equal buffers, each exposed as a
 * direct {@link ByteBuffer} over native memory that stays valid until {@link #close()}.
 *
 * <p><b>Threading:</b> a region is built and closed by one thread (the cache's owner);
 * {@link #buffer(int)} and the getters may be called from any thread in between. The cache
 * reads and writes the memory itself through the native address of each buffer, with agrona
 * and Netty primitives: a region never sits on the per-byte data path.
 *
 * <p><b>Design note:</b> a region hands out memory, not accessors, so that a new kind of memory
 * (PMEM through llpl, for instance) drops in by implementing four methods without touching the
 * cache logic.
 */
public interface MemoryRegion extends AutoCloseable {
    /**
     * @return how many buffers this region holds.
     */
    int bufferCount();

    /**
     * @return the length in bytes of each buffer.
     */
    int bufferLength();

    /**
     * @param index of the buffer, in {@code [0, bufferCount())}.
     * @return a direct buffer of {@link #bufferLength()} bytes over the buffer's memory, position
     *         0, limit at its length. The caller must not change its position or limit if it keeps
     *         the reference; the cache takes a slice.
     */
    ByteBuffer buffer(int index);

    /**
     * Whether the region's memory holds what a region at the same place left when it was closed
     * or its process died: true only for a persistent region that reopened an existing file of
     * the same length without clearing it ({@link MappedFileRegion#persistent}). A cache built
     * for a warm restart adopts the entries its catalog names from such a region; in any other
     * region the memory's contents mean nothing.
     *
     * @return false unless the region reopened preserved memory (the default).
     */
    default boolean reopened() {
        return false;
    }

    /**
     * Whether buffer {@code index} holds what it held when the region was last closed or its
     * process died (see {@link #reopened()}): a resizable persistent region reopens only the
     * buffers below its file's old end that are online now.
     *
     * @param index of a buffer, online now.
     * @return {@link #reopened()} by default: every buffer of a fixed region alike.
     */
    default boolean reopened(final int index) {
        return reopened();
    }

    /**
     * @return a human-readable description: the kind of memory and where it lives.
     */
    String description();

    /**
     * Releases the memory. Idempotent. After this call the memory must not be touched.
     */
    @Override
    void close();
}
