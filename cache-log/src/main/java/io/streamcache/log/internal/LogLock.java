package io.streamcache.log.internal;

import io.streamcache.log.LogLockedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The exclusive writer lock of one log directory, thread-safe: an OS lock
 * ({@link FileChannel#tryLock()}) on the empty file {@value #LOCK_FILE_NAME} in the directory,
 * held from {@link #acquire(Path)} to {@link #close()}, the holder's details in the file
 * {@value #FILE_NAME} beside it, and the directory's <em>writer epoch</em>.
 *
 * <h2>Two files</h2>
 * On Linux {@link FileChannel#tryLock()} takes a POSIX record lock ({@code fcntl(F_SETLK)}),
 * which belongs to the process, not to the channel: the process loses it when it closes
 * <em>any</em> descriptor of the locked file (POSIX.1-2017, {@code fcntl}, "all locks associated
 * with a file for a given process shall be removed when a file descriptor for that file is
 * closed by that process"). A lock on the file that tells who holds the log would be dropped by
 * the first support tool, health check or script that reads it inside the holding JVM. So the
 * lock is taken on {@value #LOCK_FILE_NAME}, an empty file nothing has a reason to open, whose
 * channel only this class opens and keeps open; and the details a reader wants are in
 * {@value #FILE_NAME}, which anyone may read at any time.
 *
 * <h2>Holder file</h2>
 * {@value #FILE_NAME} holds one line per fact, US-ASCII, rewritten and forced by every writer that
 * takes the lock:
 * <pre>
 *  epoch=&lt;decimal, one more than the previous holder's&gt;
 *  pid=&lt;the holder's process id&gt;
 *  host=&lt;the holder's host name&gt;
 *  started=&lt;ISO-8601 instant the lock was taken&gt;
 * </pre>
 * A second writer fails at once with a {@link LogLockedException} that quotes these facts. The
 * OS releases the lock when the holder's process dies (even by SIGKILL), so a crashed writer
 * never blocks the next; the files stay (the epoch is the history). While it rewrites the holder
 * file the acquiring writer also holds an OS lock on it, so a writer of an older version, which
 * locked {@value #FILE_NAME} itself, is refused as well.
 *
 * <h2>Within one JVM</h2>
 * A JVM-wide table of the directories this class has locked refuses a second acquisition from
 * the table, without opening either file ({@link OverlappingFileLockException} is caught as well,
 * and reported the same way).
 *
 * <h2>Epoch</h2>
 * Every acquisition increments the epoch persisted in the holder file (forced before
 * {@link #acquire} returns), so a writer that lost its lock (a network file system that let it
 * go, a forced takeover) writes with a lower epoch than every later writer.
 */
public final class LogLock implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogLock.class);

    /** The holder file's name in the log directory: the holder's details, safe to read at any time. */
    public static final String FILE_NAME = "LOCK";

    /** The name of the empty file the OS lock is held on: never opened but by this class. */
    public static final String LOCK_FILE_NAME = ".writer-lock";

    private static final ConcurrentHashMap<Path, String> HELD = new ConcurrentHashMap<>();

    private final Path directory;
    private final Path key;
    private final FileChannel channel;
    private final FileLock lock;
    private final long epoch;
    private final String holder;
    private boolean closed;

    private LogLock(final Path directory, final Path key, final FileChannel channel, final FileLock lock, final long epoch,
                    final String holder) {
        this.directory = directory;
        this.key = key;
        this.channel = channel;
        this.lock = lock;
        this.epoch = epoch;
        this.holder = holder;
    }

    /**
     * Creates the directory if absent and takes its writer lock.
     *
     * @throws LogLockedException if another writer (in this JVM or another process) holds it.
     * @throws IOException        if the directory or the lock file cannot be created or written.
     */
    public static LogLock acquire(final Path directory) throws IOException {
        Files.createDirectories(directory);
        final Path key = directory.toRealPath();
        final String placeholder = "pid=" + ProcessHandle.current().pid() + " (this JVM, opening)";
        final String other = HELD.putIfAbsent(key, placeholder);
        if (other != null) {
            throw new LogLockedException(directory, other);
        }
        FileChannel channel = null;
        try {
            channel = FileChannel.open(key.resolve(LOCK_FILE_NAME), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
            final FileLock lock = tryLock(channel, directory);
            if (lock == null) {
                throw new LogLockedException(directory, describe(readHolder(key)));
            }
            final long epoch;
            final String holder;
            // Locked while rewritten: a writer of an older version holds its lock on this file.
            try (FileChannel holderChannel = FileChannel.open(key.resolve(FILE_NAME), StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                final FileLock holderLock = tryLock(holderChannel, directory);
                if (holderLock == null) {
                    throw new LogLockedException(directory, describe(read(holderChannel)));
                }
                final String previous = read(holderChannel);
                epoch = parseEpoch(previous, key) + 1;
                holder = "epoch=" + epoch + " pid=" + ProcessHandle.current().pid() + " host=" + hostName()
                    + " started=" + Instant.now();
                final ByteBuffer content = ByteBuffer.wrap((holder.replace(' ', '\n') + '\n').getBytes(StandardCharsets.US_ASCII));
                while (content.hasRemaining()) {
                    holderChannel.write(content, content.position());
                }
                holderChannel.truncate(content.limit());
                holderChannel.force(true);
            }
            HELD.put(key, holder);
            return new LogLock(directory, key, channel, lock, epoch, holder);
        } catch (final IOException | RuntimeException | Error e) {
            if (channel != null) {
                try {
                    channel.close();
                } catch (final IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            HELD.remove(key, placeholder);
            throw e;
        }
    }

    /** {@link FileChannel#tryLock()}, with another channel of this JVM holding it reported as this JVM holding the log. */
    private static FileLock tryLock(final FileChannel channel, final Path directory) throws IOException {
        try {
            return channel.tryLock();
        } catch (final OverlappingFileLockException e) {
            throw new LogLockedException(directory, "pid=" + ProcessHandle.current().pid() + " (this JVM)");
        }
    }

    /** The holder file's content, read without locking it (so an older writer's lock on it stays); empty if absent. */
    private static String readHolder(final Path directory) {
        try {
            final byte[] bytes = Files.readAllBytes(directory.resolve(FILE_NAME));
            return new String(bytes, 0, Math.min(bytes.length, 4096), StandardCharsets.US_ASCII);
        } catch (final IOException e) {
            return "";
        }
    }

    /**
     * @return the epoch this writer took: one more than every earlier writer's on this directory.
     */
    public long epoch() {
        return epoch;
    }

    /**
     * @return the locked directory.
     */
    public Path directory() {
        return directory;
    }

    /**
     * @return this holder as written to the holder file ({@code epoch=.. pid=.. host=.. started=..}).
     */
    public String holder() {
        return holder;
    }

    /**
     * @return whether the lock is still held (not closed, and the OS lock valid).
     */
    public synchronized boolean isHeld() {
        return !closed && lock.isValid();
    }

    /**
     * Releases the lock (the file stays, with its epoch). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            lock.release();
        } catch (final IOException e) {
            LOG.debug("releasing the lock of {} failed (closing the channel releases it)", directory, e);
        }
        try {
            channel.close();
        } catch (final IOException e) {
            LOG.warn("closing the lock file of {} failed: {}", directory, e.toString());
        } finally {
            HELD.remove(key);
        }
    }

    @Override
    public String toString() {
        return "LogLock{directory=" + directory + ", " + holder + ", held=" + isHeld() + '}';
    }

    private static String read(final FileChannel channel) throws IOException {
        final long size = channel.size();
        final ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(size, 4096));
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, buffer.position()) < 0) {
                break;
            }
        }
        return new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII);
    }

    /** The lock file's lines as one {@code name=value ...} line, or null if it says nothing. */
    private static String describe(final String content) {
        final String line = content.strip().replace('\n', ' ');
        return line.isEmpty() ? null : line;
    }

    private static long parseEpoch(final String content, final Path directory) {
        for (final String line : content.split("\n")) {
            if (line.startsWith("epoch=")) {
                try {
                    return Long.parseLong(line.substring("epoch=".length()).strip());
                } catch (final NumberFormatException e) {
                    break;
                }
            }
        }
        if (!content.isBlank()) {
            LOG.warn("lock file of {} holds no readable epoch; the epoch restarts at 1: {}", directory, describe(content));
        }
        return 0;
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (final IOException e) {
            return "unknown";
        }
    }
}
