package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import org.agrona.IoUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A mapped file for a tier that changes size: each online buffer is a mapping of its own 2 MB
 * of the file, and the file is as long as the highest online buffer's end. Opened by
 * {@link MappedFileRegion#factory} for a tier whose maximum capacity exceeds its capacity.
 *
 * <pre>
 *  file:  | buffer 0 | buffer 1 | buffer 2 | buffer 3 |            length = (highest online + 1) x L
 *            mapped     mapped     offline    mapped    (4 .. max-1: beyond the end of the file)
 * </pre>
 *
 * <p>A buffer brought online past the end of the file extends the file with zeros (so that
 * the file system allocates its blocks now, not at a later {@code SIGBUS}) and maps it. A
 * buffer taken offline is unmapped; when it was the highest online buffer the file is
 * truncated to the new highest one's end, which gives the memory of a file on {@code /dev/shm}
 * (or the disk blocks of another file system) back. An offline buffer below the highest one
 * keeps its pages in the file until those above it go too, so the cache shrinks this region
 * from the top ({@link #releasesFromTheEnd()}). Each buffer is one mapping: the kernel's
 * {@code vm.max_map_count} (65,530 by default) bounds the buffers of a region.
 *
 * <p><b>Persistent</b> ({@link MappedFileRegion#persistent}, {@code keep}): the file is never
 * deleted, and an existing one whose length is a whole number of buffers, at most the maximum, is
 * kept when the region opens: the online buffers below its old end are mapped as they are
 * ({@link #reopened(int)}), a file longer than the online buffers is first truncated to them.
 * Any other file is created afresh.
 *
 * <p><b>Threading:</b> see {@link ResizableRegion}.
 */
final class ResizableMappedFileRegion extends ResizableBufferArrayRegion {
    private static final Logger LOG = LoggerFactory.getLogger(ResizableMappedFileRegion.class);

    private final Path path;
    private final MappedFileRegion.Mode mode;
    private final boolean deleteOnClose;
    private final RandomAccessFile file;
    private final FileChannel channel;
    private final MappedByteBuffer[] mappings;
    private long fileLength;
    /** Buffers [0, reopened) were mapped with the bytes a persistent file held when the region opened. */
    private int reopened;

    ResizableMappedFileRegion(final Path path, final MappedFileRegion.Mode mode, final boolean deleteOnClose, final boolean keep,
                              final int onlineCount, final int maxBufferCount, final int bufferLength) {
        super(maxBufferCount, bufferLength);
        this.path = path;
        this.mode = mode;
        this.deleteOnClose = deleteOnClose;
        this.mappings = new MappedByteBuffer[maxBufferCount];
        try {
            final Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            this.file = new RandomAccessFile(path.toFile(), "rw");
        } catch (final IOException e) {
            throw new CacheConfigurationException("mapped-file region at " + path + " could not be created (" + e
                + "): check the path and its permissions", e);
        }
        this.channel = file.getChannel();
        try {
            final long existing = keep ? file.length() : 0;
            final boolean hugePages = "hugetlbfs".equals(Files.getFileStore(path).type());
            if (keep && existing > 0 && existing % bufferLength == 0 && existing <= (long)maxBufferCount * bufferLength
                && !hugePages) {
                final long online = (long)onlineCount * bufferLength;
                if (existing > online) {
                    file.setLength(online);
                }
                fileLength = Math.min(existing, online);
                reopened = (int)(fileLength / bufferLength);
                LOG.info("persistent resizable mapped-file region at {}: kept {} buffers of the {} the file held", path,
                    reopened, existing / bufferLength);
            } else {
                if (keep && existing > 0) {
                    LOG.info("persistent resizable mapped-file region at {}: {}; created afresh", path, hugePages
                        ? "on hugetlbfs (its pages do not outlive their mappings)"
                        : "its length " + existing + " is not a whole number of buffers of " + bufferLength + " up to "
                        + maxBufferCount);
                }
                file.setLength(0);
            }
            final long needed = (long)onlineCount * bufferLength - fileLength;
            final long usable = Files.getFileStore(path).getUsableSpace();
            if (needed > usable) {
                throw new CacheConfigurationException("mapped-file region needs " + needed + " bytes at " + path
                    + " but its file system has " + usable + " usable: free space there, choose another path, "
                    + "or lower the cache capacity");
            }
            for (int i = 0; i < onlineCount; i++) {
                online(i);
            }
        } catch (final IOException e) {
            close();
            throw new CacheConfigurationException("mapped-file region at " + path + " could not be sized (" + e + ")", e);
        } catch (final RuntimeException e) {
            close();
            throw e;
        }
        LOG.info("resizable mapped-file region at {}: {} of at most {} buffers x {} bytes online ({})", path, onlineCount,
            maxBufferCount, bufferLength, mode);
    }

    @Override
    ByteBuffer attach(final int index) {
        final long end = (long)(index + 1) * bufferLength();
        final long before = fileLength;
        try {
            if (end > fileLength) {
                MappedFileRegion.reserve(channel, fileLength, end);
                fileLength = end;
            }
            final FileChannel.MapMode mapMode = mode == MappedFileRegion.Mode.SHARED
                ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.PRIVATE;
            mappings[index] = channel.map(mapMode, (long)index * bufferLength(), bufferLength());
        } catch (final IOException e) {
            truncateQuietly(before);
            throw new CacheConfigurationException("mapped-file region at " + path + " could not map buffer " + index + " ("
                + e + "): free space on its file system or grow the cache less", e);
        }
        return mappings[index];
    }

    @Override
    void release(final int index) {
        IoUtil.unmap(mappings[index]);
        mappings[index] = null;
    }

    /** Truncates the file to the highest online buffer's end: a file on /dev/shm gives its memory back. */
    @Override
    void afterOffline() {
        final long end = (long)(highestOnline() + 1) * bufferLength();
        if (end < fileLength) {
            truncateQuietly(end);
        }
    }

    private void truncateQuietly(final long length) {
        try {
            channel.truncate(length);
            fileLength = length;
        } catch (final IOException e) {
            LOG.warn("mapped-file region at {}: could not truncate to {} bytes: its pages stay in the file", path, length, e);
        }
    }

    /**
     * @return the file's length now (the highest online buffer's end).
     */
    synchronized long fileLength() {
        return fileLength;
    }

    @Override
    public boolean reopened() {
        return reopened > 0;
    }

    @Override
    public boolean reopened(final int index) {
        return index < reopened;
    }

    @Override
    public boolean releasesFromTheEnd() {
        return true;
    }

    @Override
    public String description() {
        return "resizable mapped file " + path + ", " + onlineCount() + " of " + bufferCount() + " x " + bufferLength() + " bytes online";
    }

    @Override
    void closeResources() {
        try {
            channel.close();
            file.close();
            if (deleteOnClose) {
                Files.deleteIfExists(path);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("could not close or delete mapped-file region " + path, e);
        }
    }
}
