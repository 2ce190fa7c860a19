package io.streamcache.segmentstore.internal.log;

import io.streamcache.segmentstore.log.LogLockedException;
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
 * ({@link FileChannel#tryLock()}) on the file {@value #FILE_NAME} in the directory, held from
 * {@link #acquire(Path)} to {@link #close()}, plus the directory's <em>writer epoch</em>.
 *
 * <h2>Lock file</h2>
 * The file holds one line per fact, US-ASCII, rewritten and forced by every writer that takes
 * the lock:
 * <pre>
 *  epoch=&lt;decimal, one more than the previous holder's&gt;
 *  pid=&lt;the holder's process id&gt;
 *  host=&lt;the holder's host name&gt;
 *  started=&lt;ISO-8601 instant the lock was taken&gt;
 * </pre>
 * A second writer fails at once with a {@link LogLockedException} that quotes these facts. The
 * OS releases the lock when the holder's process dies (even by SIGKILL), so a crashed writer
 * never blocks the next; the file itself stays (its epoch is the history).
 *
 * <h2>Within one JVM</h2>
 * POSIX record locks belong to the process, and closing <em>any</em> channel on the file would
 * drop them, so this class keeps a JVM-wide table of the directories it has locked and refuses a
 * second acquisition from the table, without opening the file ({@link OverlappingFileLockException}
 * is caught as well, and reported the same way).
 *
 * <h2>Epoch</h2>
 * Every acquisition increments the epoch persisted in the file (forced before {@link #acquire}
 * returns), so a writer that lost its lock (a network file system that let it go, a forced
 * takeover) writes with a lower epoch than every later writer.
 */
public final class LogLock implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogLock.class);

    /** The lock file's name in the log directory. */
    public static final String FILE_NAME = "LOCK";

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
            channel = FileChannel.open(key.resolve(FILE_NAME), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
            final FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (final OverlappingFileLockException e) {
                throw new LogLockedException(directory, "pid=" + ProcessHandle.current().pid() + " (this JVM)");
            }
            if (lock == null) {
                throw new LogLockedException(directory, describe(read(channel)));
            }
            final String previous = read(channel);
            final long epoch = parseEpoch(previous, key) + 1;
            final String holder = "epoch=" + epoch + " pid=" + ProcessHandle.current().pid() + " host=" + hostName()
                + " started=" + Instant.now();
            final ByteBuffer content = ByteBuffer.wrap((holder.replace(' ', '\n') + '\n').getBytes(StandardCharsets.US_ASCII));
            while (content.hasRemaining()) {
                channel.write(content, content.position());
            }
            channel.truncate(content.limit());
            channel.force(true);
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
     * @return this holder as written to the lock file ({@code epoch=.. pid=.. host=.. started=..}).
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
