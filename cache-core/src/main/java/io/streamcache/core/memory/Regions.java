package io.streamcache.core.memory;

import org.agrona.BufferUtil;

import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * Helpers shared by the region implementations: chunking, alignment, and direct buffers over
 * native memory the JDK did not allocate. Stateless.
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

    /**
     * A direct buffer over native memory that something else mapped (JNI's
     * {@code NewDirectByteBuffer} without JNI): a duplicate of a JDK-made direct buffer whose address
     * and capacity are overwritten. The JDK offers no public way to do this in Java 17 (the
     * foreign-memory API is still incubating there), so the two fields are written with
     * {@code Unsafe}, as agrona reads the address. The buffer does not own the memory: it frees
     * nothing when collected, and it must not be touched once the owner unmaps the memory.
     *
     * @param address first byte; the caller guarantees {@code [address, address + length)} is mapped.
     * @param length  capacity of the buffer, positive.
     * @return a native-order direct buffer, position 0, limit and capacity {@code length}.
     * @throws IllegalStateException if this JDK lays out its buffers otherwise (the result is checked).
     */
    static ByteBuffer wrap(final long address, final int length) {
        if (address == 0 || length <= 0) {
            throw new IllegalArgumentException("address=" + address + " length=" + length);
        }
        final ByteBuffer buffer = Template.BUFFER.duplicate();
        UNSAFE.putLong(buffer, Template.ADDRESS_OFFSET, address);
        UNSAFE.putInt(buffer, Template.CAPACITY_OFFSET, length);
        buffer.clear();
        if (BufferUtil.address(buffer) != address || buffer.capacity() != length || buffer.limit() != length
            || !buffer.isDirect() || buffer.isReadOnly()) {
            throw new IllegalStateException("this JDK's direct buffers do not take an address and a capacity this way: "
                + buffer + " at " + BufferUtil.address(buffer) + ", expected " + length + " bytes at " + address);
        }
        return buffer.order(ByteOrder.nativeOrder());
    }

    /**
     * What {@link #wrap} needs, initialized on its first call only, so that the regions that never
     * wrap foreign memory do not depend on it.
     */
    private static final class Template {
        /**
         * A real direct buffer of capacity 0, constructed by the JDK: {@link #wrap} duplicates it,
         * so that every field of the result is set by the JDK's own constructor except the two it
         * overwrites. It owns one byte of native memory for the life of the class.
         */
        static final ByteBuffer BUFFER = ByteBuffer.allocateDirect(0);
        static final long ADDRESS_OFFSET = fieldOffset("address");
        static final long CAPACITY_OFFSET = fieldOffset("capacity");

        private Template() {
        }

        private static long fieldOffset(final String name) {
            try {
                return UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField(name));
            } catch (final NoSuchFieldException e) {
                throw new IllegalStateException("java.nio.Buffer has no field " + name + " in this JDK", e);
            }
        }
    }
}
