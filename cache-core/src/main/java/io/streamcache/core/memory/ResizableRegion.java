package io.streamcache.core.memory;

import java.nio.ByteBuffer;

/**
 * A {@link MemoryRegion} whose buffers can be brought online and taken offline one at a time
 * while the cache runs, resized by one thread at a time and read from any: the region reserves indices for {@link #bufferCount()} buffers (the
 * tier's maximum) and holds memory only for the online ones.
 *
 * <pre>
 *   index:   0        1        2        3        4        5     (bufferCount() = 6)
 *          +--------+--------+--------+--------+- - - - -+- - - - -+
 *          | online | online | online | online | offline | offline |
 *          +--------+--------+--------+--------+- - - - -+- - - - -+
 *           memory committed / mapped            no memory: buffer(i) throws
 * </pre>
 *
 * <p><b>Threading:</b> {@link #online}, {@link #offline} and {@link #close} are called by one
 * thread at a time (the cache serializes resizes); {@link #buffer} of an online buffer and the
 * getters may be called from any thread. {@link #offline} must not be called while anything
 * may still touch the buffer's memory: the cache calls it only for a buffer that holds no
 * entry, under the buffer's monitor, after it released its views.
 */
public interface ResizableRegion extends MemoryRegion {
    /**
     * @return how many buffers are online now.
     */
    int onlineCount();

    /**
     * @param index of a buffer in {@code [0, bufferCount())}.
     * @return whether it has memory now.
     */
    boolean isOnline(int index);

    /**
     * Gives buffer {@code index} memory (commits, allocates or maps it).
     *
     * @return the buffer, as {@link #buffer(int)} returns it.
     * @throws IllegalStateException if it is online already.
     * @throws io.streamcache.core.CacheConfigurationException if the memory cannot be had (the
     *         message names the limit); the region is unchanged.
     */
    ByteBuffer online(int index);

    /**
     * Gives buffer {@code index}'s memory back to the operating system (as far as this kind of
     * memory allows: see the implementation). Its {@link ByteBuffer} must not be touched after.
     *
     * @throws IllegalStateException if it is offline already.
     */
    void offline(int index);

    /**
     * @return whether memory goes back to the system only when the highest online buffers go
     *         offline (a file that can only be truncated): the cache then shrinks from the top.
     */
    boolean releasesFromTheEnd();
}
