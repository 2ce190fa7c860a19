package io.streamcache.log.testing;

import io.streamcache.log.LogFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;

/**
 * A log file with a model of the page cache in front of it: thread-safe (every operation holds
 * the disk's lock). The real file on disk is the <em>durable image</em>; {@link #write} puts
 * whole 4 KB page images in a volatile map over it (reads see them); {@link #force} copies the
 * map's pages into the real file; a power cut ({@link PowerCutDisk#powerCut}) drops the map
 * ({@link Mode#DROP}) or copies a random subset of its pages first ({@link Mode#TEAR}: a torn
 * write at 4 KB granularity), and every later operation fails as a dead disk would. The file's
 * length (set or grown) is durable at once: the model covers data, not metadata. The real file
 * is never fsynced: the model is about the process's power, not the test machine's.
 */
public final class PowerCutLogFile implements LogFile {
    /** What a power cut does to the unforced pages. */
    public enum Mode {
        /** All are lost. */
        DROP,
        /** A random subset survives, each page whole. */
        TEAR
    }

    private final PowerCutDisk disk;
    private final Path path;
    private final FileChannel durable;
    /** Unforced pages: page index to the page's current 4 KB image. */
    private final TreeMap<Long, byte[]> pages = new TreeMap<>();
    private long length;
    private boolean closed;

    public PowerCutLogFile(final PowerCutDisk disk, final Path path) throws IOException {
        this.disk = disk;
        this.path = path;
        this.durable = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        this.length = durable.size();
    }

    @Override
    public void write(final ByteBuffer source, final long position) throws IOException {
        synchronized (disk) {
            disk.beforeOperation(this);
            ensureOpen();
            long at = position;
            while (source.hasRemaining()) {
                final long page = at / PAGE_LENGTH;
                final int within = (int)(at % PAGE_LENGTH);
                final byte[] image = pageImage(page);
                final int n = Math.min(source.remaining(), PAGE_LENGTH - within);
                source.get(image, within, n);
                at += n;
            }
            length = Math.max(length, at);
        }
    }

    private byte[] pageImage(final long page) throws IOException {
        byte[] image = pages.get(page);
        if (image == null) {
            image = new byte[PAGE_LENGTH];
            final ByteBuffer into = ByteBuffer.wrap(image);
            long at = page * PAGE_LENGTH;
            while (into.hasRemaining()) {
                final int n = durable.read(into, at);
                if (n < 0) {
                    break;
                }
                at += n;
            }
            pages.put(page, image);
        }
        return image;
    }

    @Override
    public int read(final ByteBuffer destination, final long position) throws IOException {
        synchronized (disk) {
            ensureOpen();
            final int wanted = (int)Math.max(0, Math.min(destination.remaining(), length - position));
            long at = position;
            for (int done = 0; done < wanted; ) {
                final long page = at / PAGE_LENGTH;
                final int within = (int)(at % PAGE_LENGTH);
                final int n = Math.min(wanted - done, PAGE_LENGTH - within);
                final byte[] image = pages.get(page);
                if (image != null) {
                    destination.put(image, within, n);
                } else {
                    final ByteBuffer part = destination.duplicate();
                    part.limit(part.position() + n);
                    while (part.hasRemaining()) {
                        if (durable.read(part, at + (part.position() - destination.position())) < 0) {
                            break;
                        }
                    }
                    destination.position(destination.position() + n);
                }
                done += n;
                at += n;
            }
            return wanted;
        }
    }

    @Override
    public void force() throws IOException {
        synchronized (disk) {
            disk.beforeOperation(this);
            ensureOpen();
            flush(pages);
            pages.clear();
        }
    }

    private void flush(final Map<Long, byte[]> images) throws IOException {
        for (final Map.Entry<Long, byte[]> page : images.entrySet()) {
            final long at = page.getKey() * PAGE_LENGTH;
            final int n = (int)Math.min(PAGE_LENGTH, Math.max(0, length - at));
            final ByteBuffer bytes = ByteBuffer.wrap(page.getValue(), 0, n);
            long position = at;
            while (bytes.hasRemaining()) {
                position += durable.write(bytes, position);
            }
        }
    }

    /** The power goes: the disk's lock is held. */
    public void cut(final Mode mode, final Random random) throws IOException {
        if (closed) {
            return;
        }
        if (mode == Mode.TEAR) {
            final TreeMap<Long, byte[]> survivors = new TreeMap<>();
            for (final Map.Entry<Long, byte[]> page : pages.entrySet()) {
                if (random.nextBoolean()) {
                    survivors.put(page.getKey(), page.getValue());
                }
            }
            flush(survivors);
        }
        pages.clear();
    }

    /**
     * @return pages written and not forced.
     */
    public int unforcedPages() {
        synchronized (disk) {
            return pages.size();
        }
    }

    @Override
    public long length() throws IOException {
        synchronized (disk) {
            ensureOpen();
            return length;
        }
    }

    @Override
    public void setLength(final long newLength) throws IOException {
        synchronized (disk) {
            disk.beforeOperation(this);
            ensureOpen();
            if (newLength < durable.size()) {
                durable.truncate(newLength);
            } else if (newLength > durable.size()) {
                durable.write(ByteBuffer.wrap(new byte[1]), newLength - 1);
            }
            length = newLength;
        }
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public void close() throws IOException {
        synchronized (disk) {
            if (!closed) {
                closed = true;
                durable.close();
            }
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("file " + path + " is closed");
        }
    }

    @Override
    public String toString() {
        return "PowerCutLogFile{path=" + path + ", unforcedPages=" + pages.size() + '}';
    }
}
