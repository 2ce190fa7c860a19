package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Blocking reads of a segment's bytes from wherever the store has them (cache or log), for the
 * bookie's read threads and for the scan at start: stateless, thread-safe.
 */
final class SegmentReads {

    private SegmentReads() {
    }

    /**
     * @return the {@code length} bytes at {@code offset}, read-only: the store's own zero-copy
     *         buffer when one read returns them all (the caller releases it, which unpins the
     *         cache), else a copy in a buffer from {@code copies}, made read-only too so that the
     *         caller sees one contract whichever way the bytes came.
     * @throws IOException if the bytes cannot be read (missing, truncated, disk error).
     */
    static ByteBuf view(final SegmentStore store, final String segment, final long offset, final int length,
                        final ByteBufAllocator copies) throws IOException {
        final ReadResult first = await(store.readThrough(segment, offset, length), segment, offset);
        if (first.length() == length) {
            return first.data();
        }
        final ByteBuf copy = copies.buffer(length, length);
        try {
            try {
                copy.writeBytes(first.data(), first.data().readerIndex(), first.length());
            } finally {
                first.close();
            }
            readFully(store, segment, offset + copy.writerIndex(), length - copy.writerIndex(), copy);
            return copy.asReadOnly();
        } catch (final IOException | RuntimeException e) {
            copy.release();
            throw e;
        }
    }

    /**
     * @return the {@code length} bytes at {@code offset} in a buffer from {@code copies} that the
     *         caller owns (writable; no cache memory stays pinned once this returns).
     * @throws IOException if the bytes cannot be read (missing, truncated, disk error).
     */
    static ByteBuf copy(final SegmentStore store, final String segment, final long offset, final int length,
                        final ByteBufAllocator copies) throws IOException {
        final ByteBuf copy = copies.buffer(length, length);
        try {
            readFully(store, segment, offset, length, copy);
            return copy;
        } catch (final IOException | RuntimeException e) {
            copy.release();
            throw e;
        }
    }

    /**
     * Appends the {@code length} bytes at {@code offset} to {@code destination}.
     *
     * @throws IOException if the segment ends (or the store cannot read) before {@code length} bytes.
     */
    static void readFully(final SegmentStore store, final String segment, final long offset, final int length,
                          final ByteBuf destination) throws IOException {
        long at = offset;
        int left = length;
        while (left > 0) {
            final ReadResult result = await(store.readThrough(segment, at, left), segment, at);
            try {
                final int n = result.length();
                if (n == 0) {
                    throw new IOException("segment=" + segment + " has no bytes at offset=" + at
                        + " (status=" + result.status() + ", wanted length=" + left + ")");
                }
                final ByteBuf data = result.data();
                destination.writeBytes(data, data.readerIndex(), n);
                at += n;
                left -= n;
            } finally {
                result.close();
            }
        }
    }

    static <T> T await(final CompletableFuture<T> future, final String segment, final long offset) throws IOException {
        try {
            return future.get();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            final InterruptedIOException io = new InterruptedIOException("interrupted reading segment=" + segment + " offset=" + offset);
            io.initCause(e);
            throw io;
        } catch (final ExecutionException e) {
            throw new IOException("cannot read segment=" + segment + " offset=" + offset + ": " + e.getCause(), e.getCause());
        }
    }
}
