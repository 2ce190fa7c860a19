package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Peer: RocksDB used as a cache, as Pravega did before its streaming cache: a database
 * in a fresh temporary directory, deleted on {@link #close()}. Every operation uses rocksdbjni's
 * direct-{@link ByteBuffer} variants ({@code put}, {@code get}, {@code delete}), so bytes go from
 * the source buffer into the memtable and from RocksDB into the destination buffer with no Java
 * array in between; keys are 4-byte big-endian ints in a per-thread direct buffer.
 *
 * <p>Configuration, chosen the way a cache would run it:
 * <ul>
 *   <li>write-ahead log disabled ({@code WriteOptions.setDisableWAL(true)}): a cache need not
 *       survive a crash;</li>
 *   <li>{@link #WRITE_BUFFER_SIZE} memtables, at most {@link #WRITE_BUFFERS} of them, flushed to
 *       level-0 files by up to two background jobs ({@code max_background_jobs=2}), which run
 *       on threads of their own beside the benchmark's;</li>
 *   <li>a {@link #BLOCK_CACHE_SIZE} LRU block cache for the flushed data (block size 16 KiB);
 *       the files themselves stay in the OS page cache on this machine;</li>
 *   <li>no compression: cached log data is usually compressed already, and the benchmark's data
 *       is random.</li>
 * </ul>
 * The memory RocksDB uses is therefore bounded only loosely (memtables plus block cache plus
 * the page cache of its files), which is the seed's complaint; the benchmark does not bound it
 * to the block cache's capacity.
 *
 * <p>Thread-safe (RocksDB is, and each thread gets its own key buffer): one instance may be
 * shared by every benchmark thread, each using its own keys and its own source and destination
 * buffers.
 */
final class RocksDbStore implements ByteStore {
    /** Size of one memtable. */
    static final long WRITE_BUFFER_SIZE = 64L << 20;
    /** Memtables kept at most (one being written, the others being flushed). */
    static final int WRITE_BUFFERS = 3;
    /** Capacity of the LRU block cache. */
    static final long BLOCK_CACHE_SIZE = 256L << 20;

    static {
        RocksDB.loadLibrary();
    }

    private final Path directory;
    private final LRUCache blockCache;
    private final Options options;
    private final WriteOptions writeOptions;
    private final ReadOptions readOptions;
    private final RocksDB db;
    private final ThreadLocal<ByteBuffer> keys =
        ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(Integer.BYTES).order(ByteOrder.BIG_ENDIAN));

    RocksDbStore() {
        try {
            directory = Files.createTempDirectory("streamcache-bench-rocksdb-");
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        blockCache = new LRUCache(BLOCK_CACHE_SIZE);
        options = new Options()
            .setCreateIfMissing(true)
            .setWriteBufferSize(WRITE_BUFFER_SIZE)
            .setMaxWriteBufferNumber(WRITE_BUFFERS)
            .setMaxBackgroundJobs(2)
            .setCompressionType(CompressionType.NO_COMPRESSION)
            .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(blockCache).setBlockSize(16 << 10));
        writeOptions = new WriteOptions().setDisableWAL(true);
        readOptions = new ReadOptions();
        try {
            db = RocksDB.open(options, directory.toString());
        } catch (final RocksDBException e) {
            closeOptions();
            deleteDirectory();
            throw new IllegalStateException("rocksdb: cannot open " + directory, e);
        }
    }

    private ByteBuffer key(final int key) {
        final ByteBuffer buffer = keys.get();
        buffer.clear();
        buffer.putInt(0, key);
        return buffer;
    }

    @Override
    public void put(final int key, final ByteBuf data) {
        try {
            db.put(writeOptions, key(key), data.internalNioBuffer(data.readerIndex(), data.readableBytes()));
        } catch (final RocksDBException e) {
            throw new IllegalStateException("rocksdb: put of key " + key, e);
        }
    }

    @Override
    public int get(final int key, final ByteBuf destination) {
        final int length;
        try {
            length = db.get(readOptions, key(key), destination.internalNioBuffer(0, destination.capacity()));
        } catch (final RocksDBException e) {
            throw new IllegalStateException("rocksdb: get of key " + key, e);
        }
        if (length == RocksDB.NOT_FOUND) {
            throw new IllegalStateException("rocksdb: key " + key + " is missing");
        }
        if (length > destination.capacity()) {
            throw new IllegalStateException("rocksdb: entry of key " + key + " has " + length
                + " bytes, more than the destination's " + destination.capacity());
        }
        return length;
    }

    @Override
    public void remove(final int key) {
        try {
            db.delete(writeOptions, key(key));
        } catch (final RocksDBException e) {
            throw new IllegalStateException("rocksdb: delete of key " + key, e);
        }
    }

    @Override
    public void close() {
        db.close();
        closeOptions();
        deleteDirectory();
    }

    private void closeOptions() {
        readOptions.close();
        writeOptions.close();
        options.close();
        blockCache.close();
    }

    private void deleteDirectory() {
        try (Stream<Path> paths = Files.walk(directory)) {
            for (final Path path : (Iterable<Path>)paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(path);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("rocksdb: cannot delete " + directory, e);
        }
    }
}
