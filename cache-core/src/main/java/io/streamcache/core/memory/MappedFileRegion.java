package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import org.agrona.BufferUtil;
import org.agrona.IoUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A region in a memory-mapped file, opened and closed by one thread, its buffers and getters
 * usable from any thread in between: on {@code /dev/shm} it is shared memory outside the JVM's
 * direct-memory limit, on a disk it lets the operating system page cold buffers out.
 *
 * <p><b>Threading:</b> see {@link MemoryRegion}: opened and closed by one thread.
 *
 * <p>The file is created (or truncated) when the region opens and written through once with
 * zeros, so that its blocks are reserved in the file system: a file system that cannot hold it
 * fails the build of the cache with a {@link CacheConfigurationException}, never a later
 * {@code SIGBUS} on a page the file system cannot back. The file is deleted on close unless asked
 * otherwise. Data is kept in native byte order; such a file is scratch space, not a format.
 *
 * <p><b>Persistent regions</b> ({@link #persistent(Path)}), for a warm restart: the file is a
 * shared mapping that is never deleted, and an existing file of exactly the region's length is
 * mapped as it is, not truncated nor zeroed, so that the cache's buffers (data and their metadata
 * blocks) come back as the last process left them: {@link #reopened()} is then true. A file of
 * another length (the capacity changed) or a missing file is created afresh as above and
 * {@link #reopened()} is false. What the bytes mean is the cache's business (its warm catalog,
 * see {@code docs/warm-restart.md}); the region only keeps them. Writes reach the page cache when
 * they are made, so they survive the death of the process (SIGKILL) but not of the machine unless
 * the kernel wrote them back; the region never forces the file (a cache is not durable: the
 * catalog's digests tell stale bytes from good ones).
 *
 * <p><b>Huge pages:</b> on a {@code hugetlbfs} mount (for example
 * {@code mount -t hugetlbfs none /mnt/huge} after {@code sysctl vm.nr_hugepages=N}) the region is
 * backed by huge pages, which shortens the page walks of a large cache. hugetlbfs refuses
 * {@code write(2)}, so there the file is sized with {@code ftruncate} and the shared mapping
 * reserves its pages: too few free huge pages fail the build of the cache, naming
 * {@code vm.nr_hugepages}. The buffer length must be a multiple of the huge page size (the
 * default 2 MB buffers on 2 MB pages).
 */
public final class MappedFileRegion extends BufferArrayRegion {
    private static final Logger LOG = LoggerFactory.getLogger(MappedFileRegion.class);
    private static final int ZERO_WRITE_LENGTH = 1 << 20;
    private static final String HUGETLBFS = "hugetlbfs";

    /**
     * How the file is mapped.
     */
    public enum Mode {
        /** Writes reach the file (and other mappings of it). */
        SHARED,
        /** Copy-on-write: pages are private anonymous memory once written, as the RocketMQ-on-PMEM contest design used to escape the direct-memory limit. */
        PRIVATE
    }

    private final Path path;
    private final boolean deleteOnClose;
    private final MappedByteBuffer[] chunks;
    /** Whether an existing file was mapped as it was (a persistent region's reopen). */
    private boolean reopened;

    private MappedFileRegion(
        final Path path, final Mode mode, final boolean deleteOnClose, final boolean keep, final int bufferCount,
        final int bufferLength) {
        super(bufferCount, bufferLength);
        this.path = path;
        this.deleteOnClose = deleteOnClose;
        final long length = (long)bufferCount * bufferLength;
        final int perChunk = Regions.buffersPerChunk(bufferCount, bufferLength);
        final int chunkCount = (bufferCount + perChunk - 1) / perChunk;
        this.chunks = new MappedByteBuffer[chunkCount];
        boolean hugePages = false;
        try {
            final Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            final long existing = keep && Files.isRegularFile(path) ? Files.size(path) : -1;
            try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw"); FileChannel channel = file.getChannel()) {
                final FileStore store = Files.getFileStore(path);
                hugePages = HUGETLBFS.equals(store.type());
                reopened = existing == length && !hugePages;
                if (keep && !reopened) {
                    LOG.info("persistent mapped-file region at {}: {}; created afresh", path, existing < 0 ? "no file"
                        : hugePages ? "on hugetlbfs (its pages do not outlive their mappings)"
                        : "its length " + existing + " is not the region's " + length);
                }
                if (reopened) {
                    // Mapped as it is: the last process's buffers are the point.
                } else if (hugePages) {
                    file.setLength(0);
                    // hugetlbfs refuses write(2) and reports no free space without a size= limit: the
                    // file is sized with ftruncate, and mapping it reserves its huge pages (or fails).
                    final long pageSize = store.getBlockSize();
                    if (bufferLength % pageSize != 0) {
                        throw new CacheConfigurationException("mapped-file region at " + path + " is on hugetlbfs with "
                            + pageSize + "-byte pages: bufferLength=" + bufferLength + " must be a multiple of the huge page"
                            + " size, so that every buffer and mapping starts on a page (set bufferLength; without it, blocks"
                            + " shorter than 4 KB get buffers shorter than 2 MB)");
                    }
                    file.setLength(length);
                } else {
                    file.setLength(0);
                    final long usable = store.getUsableSpace();
                    if (length > usable) {
                        throw new CacheConfigurationException("mapped-file region needs " + length + " bytes at " + path
                            + " but its file system has " + usable + " usable: free space there, choose another path, "
                            + "or lower the cache capacity");
                    }
                    reserve(channel, length);
                }
                final FileChannel.MapMode mapMode = mode == Mode.SHARED ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.PRIVATE;
                for (int c = 0; c < chunkCount; c++) {
                    final int inChunk = Math.min(perChunk, bufferCount - c * perChunk);
                    chunks[c] = channel.map(mapMode, (long)c * perChunk * bufferLength, (long)inChunk * bufferLength);
                    for (int i = 0; i < inChunk; i++) {
                        buffers[c * perChunk + i] = Regions.slice(chunks[c], i, bufferLength);
                    }
                }
            }
        } catch (final IOException e) {
            throw releaseAfter(new CacheConfigurationException("mapped-file region at " + path + " could not be created ("
                + e + "): " + (hugePages ? "hugetlbfs could not reserve " + length + " bytes of huge pages: raise vm.nr_hugepages"
                + " (HugePages_Free in /proc/meminfo) or lower the cache capacity"
                : "check the path, its permissions and free space, or lower the cache capacity"), e));
        } catch (final RuntimeException e) {
            throw releaseAfter(e);
        }
        LOG.info("mapped-file region at {}: {} buffers x {} bytes ({}{})", path, bufferCount, bufferLength, mode,
            reopened ? ", reopened as it was" : "");
    }

    /**
     * @param path file to create (an existing file is truncated and overwritten).
     * @return a factory of shared mappings of {@code path}, deleted on close.
     */
    public static MemoryRegionFactory factory(final Path path) {
        return factory(path, Mode.SHARED, true);
    }

    /**
     * @param path          file to create (an existing file is truncated and overwritten).
     * @param mode          how to map it.
     * @param deleteOnClose whether to delete the file when the region closes.
     * @return a factory of regions in {@code path}.
     */
    public static MemoryRegionFactory factory(final Path path, final Mode mode, final boolean deleteOnClose) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(mode, "mode");
        return new Factory(path, mode, deleteOnClose, false);
    }

    /**
     * Opens fixed regions, or {@link ResizableMappedFileRegion}s for a tier with a maximum capacity;
     * {@code keep}: persistent ones, which map an existing file as it is.
     */
    private record Factory(Path path, Mode mode, boolean deleteOnClose, boolean keep) implements MemoryRegionFactory {
        @Override
        public MemoryRegion open(final int bufferCount, final int bufferLength) {
            return new MappedFileRegion(path, mode, deleteOnClose, keep, bufferCount, bufferLength);
        }

        @Override
        public ResizableRegion openResizable(final int onlineCount, final int maxBufferCount, final int bufferLength) {
            return new ResizableMappedFileRegion(path, mode, deleteOnClose, keep, onlineCount, maxBufferCount, bufferLength);
        }
    }

    /**
     * A region that outlives its process, for a warm restart: a shared mapping of {@code path},
     * never deleted; an existing file of exactly the region's length is mapped as it is (not
     * truncated, not zeroed: {@link #reopened()} is true), any other is created afresh. Pair it
     * with {@code BlockCache.Builder.warmRestart}: without a warm catalog the cache clears the
     * reopened buffers' metadata as for a new region.
     *
     * <p>For a tier with a maximum capacity (a resizable tier) it opens a resizable persistent
     * region: the file is as long as the highest online buffer's end, and an existing file whose
     * length is a whole number of buffers, at most the maximum, is kept: the buffers the tier
     * brings online that lie below its old end come back as they were
     * ({@link MemoryRegion#reopened(int)}), those above are extended with zeros, and a file
     * longer than the tier's capacity now is truncated to it (its upper buffers' entries are lost).
     *
     * @param path the file that holds the buffers between runs.
     * @return a factory of persistent regions in {@code path}.
     */
    public static MemoryRegionFactory persistent(final Path path) {
        Objects.requireNonNull(path, "path");
        return new Factory(path, Mode.SHARED, false, true);
    }

    @Override
    public boolean reopened() {
        return reopened;
    }

    private static void reserve(final FileChannel channel, final long length) throws IOException {
        reserve(channel, 0, length);
    }

    /**
     * Writes zeros over {@code [from, length)} of the file so that the file system allocates its blocks.
     */
    static void reserve(final FileChannel channel, final long from, final long length) throws IOException {
        final ByteBuffer zeros = ByteBuffer.allocateDirect((int)Math.min(ZERO_WRITE_LENGTH, Math.max(1, length - from)));
        try {
            long position = from;
            while (position < length) {
                zeros.clear().limit((int)Math.min(zeros.capacity(), length - position));
                position += channel.write(zeros, position);
            }
        } finally {
            BufferUtil.free(zeros);
        }
    }

    /**
     * @return the file backing this region.
     */
    public Path path() {
        return path;
    }

    @Override
    public String description() {
        return "mapped file " + path + ", " + bufferCount + " x " + bufferLength + " bytes" + (reopened ? ", reopened" : "");
    }

    /**
     * Releases what a failed open took; a failure to release is added to {@code failure}, never thrown instead of it.
     */
    private RuntimeException releaseAfter(final RuntimeException failure) {
        try {
            release();
        } catch (final RuntimeException e) {
            failure.addSuppressed(e);
        }
        return failure;
    }

    @Override
    void release() {
        for (int c = 0; c < chunks.length; c++) {
            if (chunks[c] != null) {
                IoUtil.unmap(chunks[c]);
                chunks[c] = null;
            }
        }
        if (deleteOnClose) {
            try {
                Files.deleteIfExists(path);
            } catch (final IOException e) {
                throw new UncheckedIOException("could not delete mapped-file region " + path, e);
            }
        }
    }
}
