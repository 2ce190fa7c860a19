package io.streamcache.core.memory;

import com.intel.pmem.llpl.MemoryPool;
import com.intel.pmem.llpl.MemoryPoolException;
import io.streamcache.core.CacheConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A region in persistent memory through llpl's {@code MemoryPool}, opened and closed by one
 * thread, its buffers and getters usable from any thread in between
 * ({@value #LLPL_ARTIFACT}): a file mapped by PMDK's libpmem, on a DAX-mounted PMEM file system
 * in production, or on any file system (a temporary directory, {@code /dev/shm}) where there is
 * no PMEM, which is how it is tested.
 *
 * <p><b>Threading:</b> see {@link MemoryRegion}: opened and closed by one thread.
 *
 * <p><b>Optional dependency.</b> llpl is an optional dependency of cache-core (its upstream is
 * archived): every llpl type is confined to a nested class of this one, which the JVM loads
 * only when a region opens, so that neither loading this class nor calling {@link #factory}
 * touches llpl. Opening a region fails with a {@link CacheConfigurationException} that says what
 * to install when the llpl jar is not on the class path, or when its native library cannot be
 * loaded (it links against Debian's {@code libpmemobj1} and {@code libpmempool1}:
 * {@value #INSTALL_COMMAND}).
 *
 * <p><b>Layout.</b> The pool file holds the buffers back to back, with no header of ours; llpl
 * 1.2.0's {@code MemoryPool} maps the file byte for byte (pool offset = file offset), without a
 * header of its own either:
 * <pre>
 *  file offset 0         L                     2L                  (N-1)L                NL
 *              +---------------------+---------------------+- ... -+---------------------+
 *              | buffer 0            | buffer 1            |       | buffer N-1          |
 *              +---------------------+---------------------+- ... -+---------------------+
 *              ^ pool base address: page-aligned (libpmem maps at a 2 MB boundary when it can)
 *  N = bufferCount, L = bufferLength
 * </pre>
 * llpl reads and writes a pool through copy methods and exposes no {@link ByteBuffer}; the region
 * reads the pool's base address (a private field of llpl's pool: llpl 1.2.0 has no public
 * accessor for it) and wraps each buffer of the mapping as a direct buffer, so the cache reads
 * and writes PMEM with the same code as DRAM.
 *
 * <p><b>Sizing.</b> The file is created when the region opens (an existing file at the path is
 * replaced, as {@link MappedFileRegion} truncates one) and fully allocated by libpmem with
 * {@code posix_fallocate}, so a file system without room fails the build of the cache, never a
 * later {@code SIGBUS}; the region also checks the file system's usable space first, to name
 * the setting to change. Buffers start zeroed (the file is new).
 *
 * <p><b>Persistence.</b> None, and none is needed: a cache is not durable (the log holds the
 * durable copy); a {@link #persistent} region only keeps the pool file for a warm restart. The region never flushes: stores reach the CPU caches as stores to DRAM do,
 * then the media when the CPU evicts the lines (PMEM) or the kernel writes dirty pages back
 * (another file system). Nothing about the file's contents is guaranteed after a crash, and
 * nothing reads it back. On a disk file system that write-back is real I/O: use PMEM or a tmpfs.
 *
 * <p><b>Close</b> unmaps the pool and deletes the file (unless asked otherwise). Buffers handed
 * out before must not be touched after it: the memory is gone.
 */
public final class PmemRegion extends BufferArrayRegion {
    /** The llpl artifact this region is written against (its pool's private layout is read). */
    public static final String LLPL_ARTIFACT = "com.intel.pmem:llpl:1.2.0-release";
    /** What installs llpl's native dependencies on Debian. */
    public static final String INSTALL_COMMAND = "apt-get install libpmemobj1 libpmempool1";

    private static final Logger LOG = LoggerFactory.getLogger(PmemRegion.class);
    private static final String LLPL_POOL_CLASS = "com.intel.pmem.llpl.MemoryPool";

    private final Path path;
    private final boolean deleteOnClose;
    private final Pool pool;
    /** Whether an existing pool file was mapped as it was (a persistent region's reopen). */
    private final boolean reopened;

    private PmemRegion(final Path path, final boolean deleteOnClose, final boolean keep, final int bufferCount,
                       final int bufferLength) {
        super(checkGeometry(path, bufferCount, bufferLength), bufferLength);
        this.path = path;
        this.deleteOnClose = deleteOnClose;
        final long length = (long)bufferCount * bufferLength;
        checkLlplOnClassPath(path);
        Pool.loadNativeLibrary(path);
        final long existing = keep ? existingLength(path) : -1;
        this.reopened = existing == length;
        if (keep && !reopened) {
            LOG.info("persistent PMEM region at {}: {}; created afresh", path, existing < 0 ? "no pool file"
                : "its length " + existing + " is not the region's " + length);
        }
        if (!reopened) {
            prepareFile(path, length);
        }
        this.pool = reopened ? Pool.open(path, length) : Pool.create(path, length);
        try {
            for (int i = 0; i < bufferCount; i++) {
                buffers[i] = Regions.wrap(pool.address + (long)i * bufferLength, bufferLength);
            }
        } catch (final RuntimeException e) {
            try {
                release(true);
            } catch (final RuntimeException releasing) {
                e.addSuppressed(releasing);
            }
            throw e;
        }
        LOG.info("PMEM region at {}: {} buffers x {} bytes (llpl MemoryPool{})", path, bufferCount, bufferLength,
            reopened ? ", reopened as it was" : "");
    }

    private static long existingLength(final Path path) {
        try {
            return Files.isRegularFile(path) ? Files.size(path) : -1;
        } catch (final IOException e) {
            return -1;
        }
    }

    /**
     * @param path file to create (an existing file is replaced); deleted on close.
     * @return a factory of PMEM regions in {@code path}. Touches no llpl class: llpl is needed
     *         only when the factory opens a region.
     */
    public static MemoryRegionFactory factory(final Path path) {
        return factory(path, true);
    }

    /**
     * @param path          file to create (an existing file is replaced).
     * @param deleteOnClose whether to delete the file when the region closes.
     * @return a factory of PMEM regions in {@code path}. Touches no llpl class.
     */
    public static MemoryRegionFactory factory(final Path path, final boolean deleteOnClose) {
        Objects.requireNonNull(path, "path");
        return (bufferCount, bufferLength) -> new PmemRegion(path, deleteOnClose, false, bufferCount, bufferLength);
    }

    /**
     * A PMEM region that outlives its process, for a warm restart: never deleted; an existing
     * pool file of exactly the region's length is opened as it is ({@code MemoryPool.openPool}:
     * not recreated, not zeroed; {@link #reopened()} is true), any other is created afresh. The
     * region still never flushes: what a SIGKILL leaves is what the process stored (the mapping
     * is shared); after a power loss on real PMEM, lines the CPU had not written back are lost,
     * which the warm catalog's digests detect. Pair it with
     * {@code BlockCache.Builder.warmRestart}.
     *
     * @param path the pool file that holds the buffers between runs.
     * @return a factory of persistent PMEM regions in {@code path}. Touches no llpl class.
     */
    public static MemoryRegionFactory persistent(final Path path) {
        Objects.requireNonNull(path, "path");
        return (bufferCount, bufferLength) -> new PmemRegion(path, false, true, bufferCount, bufferLength);
    }

    @Override
    public boolean reopened() {
        return reopened;
    }

    /**
     * @return {@code bufferCount}, checked (before the base class sizes its buffer array).
     */
    private static int checkGeometry(final Path path, final int bufferCount, final int bufferLength) {
        if (bufferCount <= 0) {
            throw new CacheConfigurationException("PMEM region at " + path + ": bufferCount=" + bufferCount
                + " must be positive: raise the cache capacity");
        }
        if (bufferLength <= 0 || Integer.bitCount(bufferLength) != 1) {
            throw new CacheConfigurationException("PMEM region at " + path + ": bufferLength=" + bufferLength
                + " must be a positive power of two: change the buffer length");
        }
        return bufferCount;
    }

    /**
     * Fails with what to add when llpl is not on the class path, without loading an llpl class.
     */
    private static void checkLlplOnClassPath(final Path path) {
        try {
            Class.forName(LLPL_POOL_CLASS, false, PmemRegion.class.getClassLoader());
        } catch (final ClassNotFoundException | LinkageError e) {
            throw new CacheConfigurationException("PMEM region at " + path + " needs llpl, which is not on the class path ("
                + e + "): add the dependency " + LLPL_ARTIFACT + " (optional in cache-core, so it is not inherited), "
                + "or use a direct-memory or mapped-file region", e);
        }
    }

    /**
     * Creates the parent directories, checks the file system's room, and removes a file left at
     * {@code path} (llpl creates pools only where no file exists). Fails before removing it.
     */
    private static void prepareFile(final Path path, final long length) {
        try {
            final Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            if (Files.exists(path) && !Files.isRegularFile(path)) {
                throw new CacheConfigurationException("PMEM region at " + path + ": the path exists and is not a regular "
                    + "file (a directory, or a device: device DAX is not supported): name a file to create, on a "
                    + "DAX-mounted file system for PMEM");
            }
            final long existing = Files.isRegularFile(path) ? Files.size(path) : 0;
            final long usable = Files.getFileStore(parent != null ? parent : path).getUsableSpace();
            if (length > usable + existing) {
                throw new CacheConfigurationException("PMEM region needs " + length + " bytes at " + path
                    + " but its file system has " + usable + " usable: free space there, choose another path, "
                    + "or lower the cache capacity");
            }
            Files.deleteIfExists(path);
        } catch (final IOException e) {
            throw new CacheConfigurationException("PMEM region at " + path + " could not be created (" + e
                + "): check the path, its permissions and free space, or lower the cache capacity", e);
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
        return "PMEM (llpl MemoryPool) " + path + ", " + bufferCount + " x " + bufferLength + " bytes";
    }

    @Override
    void release() {
        release(deleteOnClose);
    }

    /**
     * Unmaps the pool, then deletes the file if asked to; a failure to unmap does not keep the file.
     */
    private void release(final boolean deleteFile) {
        RuntimeException failure = null;
        try {
            pool.close();
        } catch (final RuntimeException e) {
            failure = e;
        }
        if (deleteFile) {
            try {
                Files.deleteIfExists(path);
            } catch (final IOException e) {
                final UncheckedIOException deletion = new UncheckedIOException("could not delete PMEM region " + path, e);
                if (failure == null) {
                    failure = deletion;
                } else {
                    failure.addSuppressed(deletion);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * @return {@code e} and its causes, for a message.
     */
    private static String describe(final Throwable e) {
        final StringBuilder text = new StringBuilder(e.toString());
        for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            text.append(" <- ").append(cause);
        }
        return text.toString();
    }

    /**
     * The one place that names llpl types. Loaded (and llpl with it) when a region opens.
     *
     * <p><b>Threading:</b> owned by its region: created and closed under the region's rules.
     */
    private static final class Pool {
        private final MemoryPool pool;
        /** {@code MemoryPoolImpl.close()}: llpl 1.2.0 can unmap a pool only through this package-private method. */
        private final Method close;
        /** Native address of pool offset 0. */
        final long address;

        private Pool(final MemoryPool pool, final Method close, final long address) {
            this.pool = pool;
            this.close = close;
            this.address = address;
        }

        /**
         * Initializes llpl's pool class, which loads llpl's native library, before any file is
         * touched, so that a machine without the native dependencies fails with nothing changed.
         */
        static void loadNativeLibrary(final Path path) {
            try {
                Class.forName(MemoryPool.class.getName() + "Impl", true, MemoryPool.class.getClassLoader());
            } catch (final LinkageError e) {
                throw nativeLibraryMissing(path, e);
            } catch (final ClassNotFoundException e) {
                throw new CacheConfigurationException("PMEM region at " + path + ": llpl's MemoryPool has no "
                    + MemoryPool.class.getName() + "Impl (" + e + "): use " + LLPL_ARTIFACT, e);
            }
        }

        /**
         * UnsatisfiedLinkError the first time, NoClassDefFoundError (caused by it) after: llpl
         * loads its libllpl.so when its pool class initializes.
         */
        private static CacheConfigurationException nativeLibraryMissing(final Path path, final LinkageError e) {
            return new CacheConfigurationException("PMEM region at " + path + ": llpl's native library could not be "
                + "loaded (" + describe(e) + "): it needs Debian's libpmemobj1 and libpmempool1: " + INSTALL_COMMAND
                + " (llpl also unpacks libllpl.so into java.io.tmpdir, which must be writable and executable), "
                + "or use a direct-memory or mapped-file region", e);
        }

        /**
         * Creates and maps the pool file, then finds its base address and its unmap method.
         * Leaves no file and no mapping behind when it fails.
         */
        static Pool create(final Path path, final long length) {
            final MemoryPool pool;
            try {
                pool = MemoryPool.createPool(path.toString(), length);
            } catch (final LinkageError e) {
                throw nativeLibraryMissing(path, e);
            } catch (final MemoryPoolException | IllegalArgumentException e) {
                deleteQuietly(path, e);
                throw new CacheConfigurationException("PMEM region at " + path + " could not be created ("
                    + e.getMessage() + "): check the path, its permissions and free space, or lower the cache capacity", e);
            }
            return wrap(path, length, pool, true);
        }

        /**
         * Maps an existing pool file of {@code length} bytes as it is. Never deletes the file.
         */
        static Pool open(final Path path, final long length) {
            final MemoryPool pool;
            try {
                pool = MemoryPool.openPool(path.toString());
            } catch (final LinkageError e) {
                throw nativeLibraryMissing(path, e);
            } catch (final MemoryPoolException | IllegalArgumentException e) {
                throw new CacheConfigurationException("PMEM region at " + path + " could not be reopened ("
                    + e.getMessage() + "): check the path and its permissions, or remove the file to start cold", e);
            }
            return wrap(path, length, pool, false);
        }

        private static Pool wrap(final Path path, final long length, final MemoryPool pool, final boolean created) {
            Method close = null;
            try {
                close = pool.getClass().getDeclaredMethod("close");
                close.setAccessible(true);
                final Field field = pool.getClass().getDeclaredField("poolAddress");
                field.setAccessible(true);
                final long address = field.getLong(pool);
                if (address == 0 || (address & (Regions.ALIGNMENT - 1)) != 0 || pool.size() != length) {
                    throw new IllegalStateException("llpl mapped " + pool.size() + " bytes at 0x" + Long.toHexString(address)
                        + " for a pool of " + length + " bytes: expected a page-aligned mapping of that length");
                }
                return new Pool(pool, close, address);
            } catch (final ReflectiveOperationException | RuntimeException e) {
                final CacheConfigurationException failure = new CacheConfigurationException("PMEM region at " + path
                    + ": llpl's MemoryPool (" + pool.getClass().getName() + ") is not the one this region reads ("
                    + describe(e) + "): use " + LLPL_ARTIFACT, e);
                if (close != null) {
                    try {
                        new Pool(pool, close, 0).close();
                    } catch (final RuntimeException closing) {
                        failure.addSuppressed(closing);
                    }
                } else {
                    failure.addSuppressed(new IllegalStateException("the pool stays mapped until the JVM exits: "
                        + "llpl 1.2.0 has no public way to unmap it"));
                }
                if (created) {
                    deleteQuietly(path, failure);
                }
                throw failure;
            }
        }

        private static void deleteQuietly(final Path path, final Throwable failure) {
            try {
                Files.deleteIfExists(path);
            } catch (final IOException e) {
                failure.addSuppressed(e);
            }
        }

        /**
         * Unmaps the pool.
         *
         * @throws IllegalStateException if libpmem could not unmap it.
         */
        void close() {
            try {
                close.invoke(pool);
            } catch (final InvocationTargetException e) {
                throw new IllegalStateException("could not unmap the PMEM pool: " + describe(e.getCause()), e.getCause());
            } catch (final IllegalAccessException e) {
                throw new IllegalStateException("could not unmap the PMEM pool: " + e, e);
            }
        }
    }
}
