package io.streamcache.core.memory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Helpers shared by the region implementations: chunking and alignment. Stateless.
 */
final class Regions {
    /** Largest chunk a single {@link ByteBuffer} may cover: 1 GiB, under Java's 2 GiB index limit. */
    static final int MAX_CHUNK_LENGTH = 1 << 30;
    /** Alignment of every buffer: a page, so that blocks are page- and cache-line-aligned. */
    static final int ALIGNMENT = 4096;

    private Regions() {
    }

    /**
     * @return how many buffers one chunk holds.
     */
    static int buffersPerChunk(final int bufferCount, final int bufferLength) {
        return Math.max(1, Math.min(bufferCount, MAX_CHUNK_LENGTH / bufferLength));
    }

    /**
     * @return buffer {@code index} within its chunk, as a native-order slice.
     */
    static ByteBuffer slice(final ByteBuffer chunk, final int indexInChunk, final int bufferLength) {
        final int offset = indexInChunk * bufferLength;
        return chunk.duplicate().position(offset).limit(offset + bufferLength).slice().order(ByteOrder.nativeOrder());
    }

    static void checkIndex(final int index, final int bufferCount) {
        if (index < 0 || index >= bufferCount) {
            throw new IndexOutOfBoundsException("index=" + index + " bufferCount=" + bufferCount);
        }
    }
}
