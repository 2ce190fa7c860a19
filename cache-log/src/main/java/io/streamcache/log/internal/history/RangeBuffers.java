package io.streamcache.log.internal.history;

import io.netty.buffer.ByteBuf;

/**
 * Gives a {@link HistoricalReader} the buffers it reads ranges into, in place of a fresh heap
 * array per range (the store's pool of direct buffers: a catch-up reading the log at hundreds of
 * MB/s otherwise allocates as much heap, and the collections it causes pause every thread).
 * Must be thread-safe: called on the reading threads.
 */
@FunctionalInterface
public interface RangeBuffers {
    /**
     * @param length the bytes the range will hold, >= 1.
     * @return a writable, reference-counted buffer of at least {@code length} bytes with a
     *         reference count of 1 and writer index 0, released by the reader once every caller
     *         that claimed the range let it go (the last release gives the memory back); or
     *         null if none is available now: the reader then reads into a heap buffer.
     */
    ByteBuf allocate(int length);
}
