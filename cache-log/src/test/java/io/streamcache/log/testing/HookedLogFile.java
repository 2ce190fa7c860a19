package io.streamcache.log.testing;

import io.streamcache.log.internal.FileChannelLogFile;
import io.streamcache.log.internal.LogFileDescriptor;

import io.streamcache.log.DirectIoMode;
import io.streamcache.log.LogFile;
import io.streamcache.log.LogFileFactory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link LogFile} around a real one with test hooks: thread-safe. Records every write
 * (position, length); can hold writes at a gate (a test releases them one at a time); can act as
 * a disk with a byte budget that fails writes past it with {@code No space left on device}
 * (nothing of such a write is written); can fail file creation and forces (all, or those past a
 * budget of forces).
 */
public final class HookedLogFile implements LogFile {
    /**
     * Hooks shared by the files of one factory.
     */
    public static final class Hooks implements LogFileFactory {
        /** Called at the start of every force, on the forcing thread, before the force hooks below: may wait, or throw to fail it. */
        public volatile ForceHook forceHook;
        public final List<long[]> writes = new CopyOnWriteArrayList<>();
        public final AtomicLong forces = new AtomicLong();
        /** In order: "W " or "F " (a data write or a force) and the file's name. */
        public final List<String> events = new CopyOnWriteArrayList<>();
        /** Bytes that may still be written; Long.MAX_VALUE for no limit. */
        public final AtomicLong space = new AtomicLong(Long.MAX_VALUE);
        /** Opening (creating) a file fails with {@code No space left on device}. */
        public volatile boolean failOpens;
        /** Forces fail with {@code Input/output error}. */
        public volatile boolean failForces;
        /** Forces that may still succeed, the ones after them fail as with {@link #failForces}; Long.MAX_VALUE for no limit. */
        public final AtomicLong forcesLeft = new AtomicLong(Long.MAX_VALUE);
        /** Permits for writes to data positions (past the header page); null: no gate. */
        public volatile Semaphore gate;
        public final AtomicLong gateWaiting = new AtomicLong();
        private final LogFileFactory delegate;

        public Hooks(final LogFileFactory delegate) {
            this.delegate = delegate;
        }

        public Hooks() {
            this(FileChannelLogFile.factory(DirectIoMode.OFF));
        }

        @Override
        public LogFile open(final Path path) throws IOException {
            if (failOpens) {
                throw new IOException("No space left on device");
            }
            return new HookedLogFile(this, delegate.open(path));
        }
    }

    /** What a test does at the start of a force. */
    @FunctionalInterface
    public interface ForceHook {
        void beforeForce() throws IOException;
    }

    private final Hooks hooks;
    private final LogFile delegate;

    public HookedLogFile(final Hooks hooks, final LogFile delegate) {
        this.hooks = hooks;
        this.delegate = delegate;
    }

    @Override
    public void write(final ByteBuffer source, final long position) throws IOException {
        final int length = source.remaining();
        final Semaphore gate = hooks.gate;
        if (gate != null && position >= LogFileDescriptor.FIRST_RECORD_POSITION) {
            hooks.gateWaiting.incrementAndGet();
            try {
                gate.acquire();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted at the gate", e);
            } finally {
                hooks.gateWaiting.decrementAndGet();
            }
        }
        while (true) {
            final long space = hooks.space.get();
            if (space != Long.MAX_VALUE && space < length) {
                throw new IOException("No space left on device");
            }
            if (space == Long.MAX_VALUE || hooks.space.compareAndSet(space, space - length)) {
                break;
            }
        }
        hooks.writes.add(new long[] {position, length});
        delegate.write(source, position);
        hooks.events.add("W " + delegate.path().getFileName());
    }

    @Override
    public int read(final ByteBuffer destination, final long position) throws IOException {
        return delegate.read(destination, position);
    }

    @Override
    public void force() throws IOException {
        final ForceHook hook = hooks.forceHook;
        if (hook != null) {
            hook.beforeForce();
        }
        final long left = hooks.forcesLeft.getAndUpdate(n -> n == Long.MAX_VALUE || n == 0 ? n : n - 1);
        if (hooks.failForces || left == 0) {
            throw new IOException("Input/output error");
        }
        hooks.forces.incrementAndGet();
        delegate.force();
        hooks.events.add("F " + delegate.path().getFileName());
    }

    @Override
    public long length() throws IOException {
        return delegate.length();
    }

    @Override
    public void setLength(final long length) throws IOException {
        delegate.setLength(length);
    }

    @Override
    public Path path() {
        return delegate.path();
    }

    @Override
    public boolean isDirectIo() {
        return delegate.isDirectIo();
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
