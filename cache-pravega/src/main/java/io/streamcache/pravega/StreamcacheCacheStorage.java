package io.streamcache.pravega;

import io.netty.buffer.ByteBuf;
import io.pravega.common.ObjectClosedException;
import io.pravega.common.util.BufferView;
import io.pravega.segmentstore.storage.cache.CacheFullException;
import io.pravega.segmentstore.storage.cache.CacheState;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.shared.protocol.netty.ByteBufWrapper;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CloseGate;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheFullHandler;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.core.memory.DirectMemoryRegion;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pravega's {@link CacheStorage} over a streamcache {@link BlockCache}: thread-safe for
 * operations on distinct entries, and for concurrent {@link #get} of one entry; the operations
 * that change one entry ({@link #append}, {@link #replace}, {@link #delete}) must be serialized
 * by the caller, as Pravega's read index, attribute index and key cache do under their locks.
 *
 * <p>What each method does, where it differs from Pravega's {@code DirectMemoryCache}
 * (docs/pravega.md lists the differences):
 * <ul>
 *   <li>{@link #insert} copies a view longer than a block into the cache's blocks, one copy
 *       per contiguous run, straight from the {@link ByteBuffer}s the view hands to
 *       {@link BufferView#collect}. A view of at most a block (every {@link #append}, small
 *       inserts) is first copied with {@link BufferView#copyTo(ByteBuffer)} into a per-thread
 *       direct buffer of one block, then into the cache: for Pravega's views that costs less
 *       than {@code collect}, which builds NIO buffers per call: 100-byte appends from a
 *       {@code ByteBufWrapper} measured 192 B/op through {@code collect} and 0 B/op through
 *       {@code copyTo} (its duplicate does not escape), 94 ns against 58 (docs/benchmarks-pravega.md).
 *       Nothing is allocated here either way.</li>
 *   <li>{@link #append} fills only the entry's last block, as the interface allows; it checks
 *       the whole {@code expectedLength} against the entry (Pravega's cache checks only its
 *       remainder modulo the block length) and throws {@link IncorrectEntryLengthException}.</li>
 *   <li>{@link #get} returns a zero-copy, read-only view of the entry's blocks, or {@code null}
 *       for address 0 and for an address whose entry was deleted.</li>
 *   <li>{@link #delete} of address 0, of a deleted entry or of an address that an entry no
 *       longer ends at has no effect, as the interface says (Pravega's cache frees whatever
 *       block the address names now, possibly another entry's).</li>
 *   <li>An address the cache could never have returned (a metadata block, past the last
 *       buffer) is rejected by every method with {@link InvalidAddressException}, an
 *       {@link IllegalArgumentException}, before anything changes.</li>
 *   <li>When the cache is full, the callback given to {@link #setCacheFullCallback} runs on the
 *       allocating thread with no lock held, up to {@value #MAX_CLEANUP_ATTEMPTS} times per
 *       operation, sleeping {@code attempt x retryDelayBaseMillis} after a callback that freed
 *       nothing; then the operation fails with Pravega's {@link CacheFullException} and the
 *       entry is as it was.</li>
 * </ul>
 * Addresses stay positive: the constructor rejects a cache whose addresses would reach the
 * sign bit, since Pravega keeps negative values as "no address". They have the layout of
 * Pravega's {@code DirectMemoryCache} (buffer id above 10 bits of block id).
 *
 * <p>Not final, as {@code DirectMemoryCache} is not: Pravega's {@code ContainerKeyCacheTests}
 * spy on the cache storage with Mockito. Not designed for extension otherwise.
 */
public class StreamcacheCacheStorage implements CacheStorage {
    /** Callback runs per operation before it fails, as in Pravega's {@code DirectMemoryCache}. */
    public static final int MAX_CLEANUP_ATTEMPTS = 5;
    /**
     * The block cache's own full-retry bound for caches built by {@link #create(long)}: long
     * enough that the callback's attempts, not the cache's timer, end a full operation.
     */
    public static final Duration FULL_RETRY_TIMEOUT = Duration.ofSeconds(60);
    /**
     * The longest entry, as in Pravega's {@code DirectMemoryCache} (2^26 - 1 bytes): Pravega's
     * read index cuts longer data into entries of this length.
     */
    public static final int PRAVEGA_MAX_ENTRY_LENGTH = 0x03FF_FFFF;

    /**
     * Bits of the block id in an address of Pravega's {@code DirectMemoryCache} (its
     * {@code CacheLayout.DefaultLayout}: the buffer id above 10 bits of block id, though a buffer
     * has 512 blocks). This storage hands out addresses in the same layout, which Pravega's own
     * tests decode to tell which buffer an entry went to; the block cache's own addresses have
     * 9 bits of block index for 512 blocks, and are translated at the interface.
     */
    static final int PRAVEGA_BLOCK_ID_BITS = 10;

    private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    /** How long {@link #close()} waits for the operations in flight before it frees the memory anyway. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final Logger LOG = LoggerFactory.getLogger(StreamcacheCacheStorage.class);

    private final BlockCache cache;
    /** Bits of the block index in the block cache's addresses. */
    private final int blockBits;
    /** Bits of the block index in the addresses this storage hands out: at least Pravega's 10. */
    private final int addressBlockBits;
    /** Operations in flight, so that {@link #close()} frees the memory only after they returned. */
    private final CloseGate gate = new CloseGate();
    private final int blockLength;
    private final int maxEntryLength;
    private final ThreadLocal<Writer> writers;
    private volatile Supplier<Boolean> cacheFullCallback;
    private volatile int retryDelayBaseMillis;

    /**
     * Wraps a block cache, which this storage then owns: it installs its full handler and
     * closes the cache on {@link #close()}.
     *
     * @throws IllegalStateException    if the cache already has a full handler (another owner).
     * @throws IllegalArgumentException if the cache's addresses can reach the sign bit.
     */
    public StreamcacheCacheStorage(final BlockCache cache) {
        this.cache = Objects.requireNonNull(cache, "cache");
        if (cache.fullHandler() != CacheFullHandler.NONE) {
            throw new IllegalStateException("cache=" + cache.name() + " already has a full handler: "
                + "a CacheStorage must be the only owner of its block cache");
        }
        final long bufferCount = cache.capacity() / cache.bufferLength();
        this.blockBits = Integer.numberOfTrailingZeros(cache.bufferLength() / cache.blockLength());
        this.addressBlockBits = Math.max(PRAVEGA_BLOCK_ID_BITS, blockBits);
        if (bufferCount > 1L << (Integer.SIZE - 1 - addressBlockBits)) {
            throw new IllegalArgumentException("capacity=" + cache.capacity() + " bufferLength=" + cache.bufferLength()
                + " blockLength=" + cache.blockLength() + ": addresses would reach the sign bit, which Pravega reads as "
                + "no address; use longer buffers or blocks");
        }
        this.blockLength = cache.blockLength();
        this.maxEntryLength = Math.min(cache.maxEntryLength(), PRAVEGA_MAX_ENTRY_LENGTH);
        final int stagingLength = this.blockLength;
        this.writers = ThreadLocal.withInitial(() -> new Writer(stagingLength));
        cache.fullHandler(this::onCacheFull);
    }

    /**
     * The largest capacity {@link #create} accepts, as Pravega's {@code DirectMemoryCache}: 256 GiB.
     */
    public static final long MAX_CAPACITY = 256L << 30;

    /**
     * A storage over a new block cache of direct memory with the default 2 MB buffers of 4 KB
     * blocks (Pravega's layout). As Pravega's {@code DirectMemoryCache(maxSizeBytes)}: the
     * capacity is rounded up to whole buffers (so {@code create(10)} holds one buffer), and the
     * buffers get their memory as the cache first needs them
     * ({@link io.streamcache.core.memory.DirectMemoryRegion.Commit#ON_DEMAND}), counted in the
     * JDK's direct memory: a large capacity costs nothing until it is filled.
     *
     * @param capacity bytes of the cache, data plus metadata, in {@code (0, MAX_CAPACITY]}.
     * @throws IllegalArgumentException if it is outside that range.
     */
    public static StreamcacheCacheStorage create(final long capacity) {
        if (capacity <= 0 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity=" + capacity + " must be positive and at most " + MAX_CAPACITY);
        }
        final long buffer = BlockCache.Builder.BUFFER_LENGTH_DEFAULT;
        return new StreamcacheCacheStorage(BlockCache.builder()
            .capacity((capacity + buffer - 1) / buffer * buffer)
            .region(DirectMemoryRegion.factory())
            .fullRetryTimeout(FULL_RETRY_TIMEOUT)
            .name("pravega-cache-" + INSTANCES.incrementAndGet())
            .registerMBean(false)
            .build());
    }

    /**
     * @return the block cache underneath, for its stats and MXBean; do not change its entries.
     */
    public BlockCache blockCache() {
        return cache;
    }

    @Override
    public int getBlockAlignment() {
        return blockLength;
    }

    @Override
    public int getMaxEntryLength() {
        return maxEntryLength;
    }

    @Override
    public int insert(final BufferView data) {
        enter();
        try {
            return doInsert(data);
        } finally {
            gate.exit();
        }
    }

    private int doInsert(final BufferView data) {
        Objects.requireNonNull(data, "data");
        ensureOpen();
        final int length = data.getLength();
        if (length > maxEntryLength) {
            throw new IllegalArgumentException("data.length=" + length + " exceeds maxEntryLength=" + maxEntryLength);
        }
        final Writer writer = writer();
        writer.begin(cache, NO_ADDRESS);
        try {
            if (length <= writer.staging.capacity()) {
                writer.address = cache.insert(writer.stage(data));
            } else {
                data.collect(writer);
            }
            if (writer.address == NO_ADDRESS) {
                writer.address = cache.insert(EMPTY);
            }
            return toPravega(writer.address);
        } catch (final RuntimeException | Error e) {
            if (writer.address != NO_ADDRESS && !cache.isClosed()) {
                cache.delete(writer.address);
            }
            throw translate(e);
        } finally {
            writer.end();
        }
    }

    @Override
    public int replace(final int address, final BufferView data) {
        enter();
        try {
            return doReplace(address, data);
        } finally {
            gate.exit();
        }
    }

    private int doReplace(final int address, final BufferView data) {
        Objects.requireNonNull(data, "data");
        ensureOpen();
        final boolean live = isLive(address);
        // Insert first, then delete: a full cache or a bad view leaves the old entry as it was.
        final int inserted = insert(data);
        if (live) {
            // Through delete(int): a full callback during the insert may have evicted the old entry.
            delete(address);
        }
        return inserted;
    }

    @Override
    public int getAppendableLength(final int currentLength) {
        if (currentLength < 0) {
            throw new IllegalArgumentException("currentLength=" + currentLength + " must not be negative");
        }
        final int lastBlock = currentLength % blockLength;
        final int block = currentLength == 0 ? blockLength : (lastBlock == 0 ? 0 : blockLength - lastBlock);
        return Math.max(0, Math.min(block, maxEntryLength - currentLength));
    }

    @Override
    public int append(final int address, final int expectedLength, final BufferView data) {
        enter();
        try {
            return doAppend(address, expectedLength, data);
        } finally {
            gate.exit();
        }
    }

    private int doAppend(final int address, final int expectedLength, final BufferView data) {
        Objects.requireNonNull(data, "data");
        ensureOpen();
        if (address == NO_ADDRESS) {
            throw new IllegalArgumentException("address=0 names no entry");
        }
        final int internal = fromPravega(address);
        final int length;
        try {
            length = cache.length(internal);
        } catch (final CacheClosedException e) {
            throw new ObjectClosedException(this, e);
        }
        if (length != expectedLength) {
            throw new IncorrectEntryLengthException("address=0x" + Integer.toHexString(address) + " has length=" + length
                + ", not expectedLength=" + expectedLength);
        }
        final int appendable = getAppendableLength(length);
        final int dataLength = data.getLength();
        if (dataLength > appendable) {
            throw new IllegalArgumentException("data.length=" + dataLength + " exceeds the appendable length=" + appendable
                + " of an entry of length=" + length + " (blockLength=" + blockLength + "); see getAppendableLength");
        }
        if (dataLength == 0) {
            return 0;
        }
        final Writer writer = writer();
        writer.begin(cache, internal);
        try {
            // At most a block: appends only fill the last block.
            cache.append(internal, writer.stage(data));
        } catch (final RuntimeException | Error e) {
            throw translate(e);
        } finally {
            writer.end();
        }
        return dataLength;
    }

    @Override
    public void delete(final int address) {
        enter();
        try {
            doDelete(address);
        } finally {
            gate.exit();
        }
    }

    private void doDelete(final int address) {
        ensureOpen();
        if (address == NO_ADDRESS) {
            return;
        }
        try {
            cache.delete(fromPravega(address));
        } catch (final InvalidAddressException e) {
            if (!namesNoEntry(e)) {
                throw e;
            }
        } catch (final CacheClosedException e) {
            throw new ObjectClosedException(this, e);
        }
    }

    @Override
    public BufferView get(final int address) {
        enter();
        try {
            return doGet(address);
        } finally {
            gate.exit();
        }
    }

    private BufferView doGet(final int address) {
        ensureOpen();
        if (address == NO_ADDRESS) {
            return null;
        }
        final ByteBuf view;
        try {
            view = cache.view(fromPravega(address));
        } catch (final InvalidAddressException e) {
            if (namesNoEntry(e)) {
                return null;
            }
            throw e;
        } catch (final CacheClosedException e) {
            throw new ObjectClosedException(this, e);
        }
        // The view is unreleasable: Pravega's release() on the wrapper leaves the cache's memory alone.
        return new ByteBufWrapper(view);
    }

    @Override
    public CacheState getState() {
        enter();
        try {
            return doGetState();
        } finally {
            gate.exit();
        }
    }

    private CacheState doGetState() {
        ensureOpen();
        final CacheStats stats;
        try {
            stats = cache.stats();
        } catch (final CacheClosedException e) {
            throw new ObjectClosedException(this, e);
        }
        // DirectMemoryCache's meaning, which Pravega's CacheManager and tests compute with: a
        // buffer counts once it has memory (allocated), its metadata block is reserved and used
        // from then on, and max - used is what an insert can still take from allocated buffers
        // (and unallocated ones, less their metadata blocks).
        final long buffers = cache.allocatedBufferCount();
        final long block = stats.blockLength();
        return new CacheState(stats.storedBytes(), (stats.usedBlockCount() + buffers) * block, buffers * block,
            buffers * stats.bufferLength(), stats.capacity());
    }

    @Override
    public void setCacheFullCallback(final Supplier<Boolean> cacheFullCallback, final int retryDelayBaseMillis) {
        Objects.requireNonNull(cacheFullCallback, "cacheFullCallback");
        if (retryDelayBaseMillis < 0) {
            throw new IllegalArgumentException("retryDelayBaseMillis=" + retryDelayBaseMillis + " must not be negative");
        }
        this.retryDelayBaseMillis = retryDelayBaseMillis;
        this.cacheFullCallback = cacheFullCallback;
    }

    /**
     * Closes the block cache and frees its memory. Idempotent, and safe while other threads
     * still call the operations (Pravega's read index deletes its entries on its own executor
     * while a container shuts down): new operations throw {@code ObjectClosedException} at once,
     * and the memory is freed only once those in flight have returned (at most
     * {@link #CLOSE_WAIT}; a close called from inside an operation, such as a full callback, does
     * not wait for itself: it waits that long, logs a warning and frees the memory). Views
     * returned by {@link #get} throw Pravega's {@code ObjectClosedException} or Netty's
     * reference-count exception when read afterwards.
     */
    @Override
    public void close() {
        if (!gate.closeAndAwait(CLOSE_WAIT.toNanos())) {
            LOG.warn("{}: closing with {} operations still in flight after {} (a close from inside an operation, or one"
                + " that does not return); they may fail or read released memory", this, gate.inFlight(), CLOSE_WAIT);
        }
        cache.close();
    }

    /** Admits an operation, or throws Pravega's {@link ObjectClosedException} once closing. */
    private void enter() {
        if (!gate.enter()) {
            throw new ObjectClosedException(this);
        }
    }

    @Override
    public String toString() {
        return "StreamcacheCacheStorage[cache=" + cache.name() + ", capacity=" + cache.capacity() + ", blockLength="
            + blockLength + "]";
    }

    private boolean isLive(final int address) {
        if (address == NO_ADDRESS) {
            return false;
        }
        try {
            cache.length(fromPravega(address));
            return true;
        } catch (final InvalidAddressException e) {
            if (namesNoEntry(e)) {
                return false;
            }
            throw e;
        } catch (final CacheClosedException e) {
            throw new ObjectClosedException(this, e);
        }
    }

    /** @return the block cache's address {@code internal} in the layout this storage hands out. */
    private int toPravega(final int internal) {
        final int block = internal & ((1 << blockBits) - 1);
        return ((internal >>> blockBits) << addressBlockBits) | block;
    }

    /**
     * @return the block cache's address for {@code address} (not 0), as {@link #toPravega} made it.
     * @throws InvalidAddressException if no address of this storage looks like it (negative, or
     *         a block id past the buffer's blocks).
     */
    private int fromPravega(final int address) {
        final int block = address & ((1 << addressBlockBits) - 1);
        if (address < 0 || block >>> blockBits != 0) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.OUT_OF_RANGE,
                "not an address of this cache: block id " + block + " is past the " + (1 << blockBits) + " blocks of a buffer");
        }
        return ((address >>> addressBlockBits) << blockBits) | block;
    }

    /**
     * @return whether the address could have been returned once and names no entry now (a
     *         deleted entry, or a block an entry no longer ends at), as opposed to an address
     *         this cache never returns.
     */
    private static boolean namesNoEntry(final InvalidAddressException e) {
        return e.reason() == InvalidAddressException.Reason.FREED_BLOCK
            || e.reason() == InvalidAddressException.Reason.NOT_LAST_BLOCK;
    }

    /**
     * @return the calling thread's writer, or a new one if a full callback running inside an
     *         operation of this thread writes to the cache itself.
     */
    private Writer writer() {
        final Writer writer = writers.get();
        return writer.busy ? new Writer(blockLength) : writer;
    }

    private void ensureOpen() {
        if (cache.isClosed()) {
            throw new ObjectClosedException(this);
        }
    }

    private RuntimeException translate(final Throwable e) {
        if (e instanceof io.streamcache.core.CacheFullException) {
            return new CacheFullException("cache=" + cache.name() + " is full after up to " + MAX_CLEANUP_ATTEMPTS
                + " cleanup callbacks: " + e.getMessage() + "; state: " + getState());
        }
        if (e instanceof CacheClosedException) {
            return new ObjectClosedException(this, e);
        }
        if (e instanceof RuntimeException) {
            return (RuntimeException)e;
        }
        throw (Error)e;
    }

    /**
     * The block cache's full handler: Pravega's retry-after-eviction loop, counted per operation
     * in the calling thread's {@link Writer}.
     */
    private boolean onCacheFull(final int blockCount) {
        final Writer writer = writers.get();
        if (!writer.busy) {
            return false;
        }
        final int attempt = ++writer.cleanupAttempts;
        if (attempt > MAX_CLEANUP_ATTEMPTS) {
            return false;
        }
        final Supplier<Boolean> callback = cacheFullCallback;
        if (callback != null && !callback.get()) {
            final long sleepMillis = (long)attempt * retryDelayBaseMillis;
            if (sleepMillis > 0 && attempt < MAX_CLEANUP_ATTEMPTS) {
                try {
                    Thread.sleep(sleepMillis);
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * One per thread, reused: receives the parts of a view from {@link BufferView#collect} and
     * copies each into the entry being written (the first part of an insert creates it), stages
     * views of at most a block, and counts the full-callback attempts of the current operation.
     * Confined to its thread.
     */
    private static final class Writer implements BufferView.Collector<RuntimeException> {
        /** Direct, one block long: small views are copied here first (see the class comment). */
        private final ByteBuffer staging;
        /** The cache of the current operation; null between operations, so a pool thread's writer keeps no closed cache alive. */
        private BlockCache cache;
        private int address;
        private int cleanupAttempts;
        private boolean busy;

        Writer(final int stagingLength) {
            staging = ByteBuffer.allocateDirect(stagingLength);
        }

        /**
         * @return the staging buffer holding the view's bytes, from position 0.
         */
        ByteBuffer stage(final BufferView data) {
            staging.clear();
            data.copyTo(staging);
            return staging.flip();
        }

        void begin(final BlockCache target, final int startAddress) {
            cache = target;
            address = startAddress;
            cleanupAttempts = 0;
            busy = true;
        }

        void end() {
            cache = null;
            busy = false;
        }

        @Override
        public void accept(final ByteBuffer part) {
            if (!part.hasRemaining()) {
                return;
            }
            address = address == NO_ADDRESS ? cache.insert(part) : cache.append(address, part);
        }
    }
}
