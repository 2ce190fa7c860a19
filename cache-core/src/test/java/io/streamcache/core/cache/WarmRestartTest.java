package io.streamcache.core.cache;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cache over a persistent mapped-file region, reopened with its warm catalog: what comes back
 * after a clean close, and what is discarded (and why) when the region or the catalog was
 * damaged, is stale, or belongs to another geometry or version. {@link PmemWarmRestartTest} runs
 * the same over a persistent llpl pool.
 */
class WarmRestartTest {
    private static final int BLOCK = 4096;
    private static final int BUFFER = 64 * BLOCK;
    private static final long CAPACITY = 8L * BUFFER;

    @TempDir
    Path dir;

    private Path regionFile() {
        return dir.resolve("region");
    }

    private Path catalogFile() {
        return dir.resolve("catalog");
    }

    /** The persistent region under test; its file's offsets are the region's (flips land where the test aims). */
    MemoryRegionFactory persistentRegion(final Path file) {
        return MappedFileRegion.persistent(file);
    }

    private BlockCache open(final long capacity) {
        return BlockCache.builder().capacity(capacity).blockLength(BLOCK).bufferLength(BUFFER).registerMBean(false)
            .region(persistentRegion(regionFile())).warmRestart(catalogFile()).build();
    }

    /** Entries written, by address, with their bytes. */
    private final Map<Integer, byte[]> written = new HashMap<>();
    private final Random random = new Random(42);

    private byte[] bytes(final int length) {
        final byte[] data = new byte[length];
        random.nextBytes(data);
        return data;
    }

    private int insert(final BlockCache cache, final int length) {
        final byte[] data = bytes(length);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        written.put(address, data);
        return address;
    }

    private static byte[] read(final BlockCache cache, final int address) {
        final byte[] out = new byte[cache.length(address)];
        cache.copyTo(address, 0, ByteBuffer.wrap(out));
        return out;
    }

    /** Writes a catalog of every entry in {@link #written}, owner = address, position = 0. */
    private void checkpoint(final BlockCache cache, final boolean clean) throws IOException {
        try (WarmCatalog.Writer writer = new WarmCatalog.Writer(cache, 77, 1)) {
            for (final int address : written.keySet()) {
                writer.add(address, 0, address, cache.length(address), cache.digest(address), 0);
            }
            writer.commit(clean);
        }
    }

    private void fill(final BlockCache cache) {
        final int[] lengths = {0, 1, 100, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 17, 10 * BLOCK};
        for (int i = 0; i < 40; i++) {
            insert(cache, lengths[i % lengths.length]);
        }
    }

    private void assertAllBack(final BlockCache cache) {
        final WarmStart start = cache.warmStart();
        assertTrue(start.warm(), start::toString);
        assertEquals(written.size(), start.adopted().size(), start::toString);
        for (final WarmCatalog.Entry entry : start.adopted()) {
            assertArrayEquals(written.get(entry.address()), read(cache, entry.address()));
        }
        assertEquals(written.size(), cache.stats().entryCount());
    }

    @Test
    void cleanCloseBringsEveryEntryBackAndTheFreeBlocksStayFree() throws IOException {
        long used;
        try (BlockCache cache = open(CAPACITY)) {
            assertFalse(cache.warmStart().warm());
            fill(cache);
            // Holes: deleted entries leave free blocks between adopted ones.
            final List<Integer> addresses = new ArrayList<>(written.keySet());
            for (int i = 0; i < addresses.size(); i += 3) {
                cache.delete(addresses.get(i));
                written.remove(addresses.get(i));
            }
            used = cache.stats().usedBlockCount();
            checkpoint(cache, true);
        }
        try (BlockCache cache = open(CAPACITY)) {
            assertTrue(cache.warmStart().cleanShutdown());
            assertEquals(77, cache.warmStart().identity());
            assertAllBack(cache);
            assertEquals(used, cache.stats().usedBlockCount());
            // Every free block can be had, and none of them is an adopted entry's.
            final long free = cache.stats().blockCount() - used;
            final List<Integer> fresh = new ArrayList<>();
            for (long i = 0; i < free; i++) {
                fresh.add(cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK])));
            }
            assertThrows(io.streamcache.core.CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(new byte[1])));
            for (final WarmCatalog.Entry entry : cache.warmStart().adopted()) {
                assertArrayEquals(written.get(entry.address()), read(cache, entry.address()));
                cache.delete(entry.address());
            }
            for (final int address : fresh) {
                cache.delete(address);
            }
            assertEquals(0, cache.stats().usedBlockCount());
        }
        // The reopen cleared the catalog's clean mark.
        try (BlockCache cache = open(CAPACITY)) {
            assertTrue(cache.warmStart().warm());
            assertFalse(cache.warmStart().cleanShutdown());
        }
    }

    @Test
    void aFlippedDataBitDiscardsThatEntryOnly() throws IOException {
        final int victim;
        try (BlockCache cache = open(CAPACITY)) {
            fill(cache);
            victim = insert(cache, 5 * BLOCK + 3);
            checkpoint(cache, true);
        }
        // The victim's last block holds its last 3 bytes at the start of the block.
        flipByte(regionFile(), (long) (victim >>> 6) * BUFFER + (long) (victim & 63) * BLOCK + 1);
        try (BlockCache cache = open(CAPACITY)) {
            final WarmStart start = cache.warmStart();
            assertEquals(1, start.discarded(WarmStart.Discard.DIGEST_MISMATCH), start::toString);
            assertEquals(written.size() - 1, start.adopted().size());
            written.remove(victim);
            for (final WarmCatalog.Entry entry : start.adopted()) {
                assertArrayEquals(written.get(entry.address()), read(cache, entry.address()));
            }
            assertEquals(written.size(), cache.stats().entryCount());
        }
    }

    @Test
    void aFlippedMetadataBitDiscardsThatEntryAndFreesItsBlocks() throws IOException {
        final int victim;
        final long usedBefore;
        try (BlockCache cache = open(CAPACITY)) {
            fill(cache);
            victim = insert(cache, 3 * BLOCK);
            usedBefore = cache.stats().usedBlockCount();
            checkpoint(cache, true);
        }
        // The used flag (bit 63) of the victim's last block word, in block 0 of its buffer.
        flipBit(regionFile(), (long) (victim >>> 6) * BUFFER + (victim & 63) * 8L + 7, 7);
        try (BlockCache cache = open(CAPACITY)) {
            final WarmStart start = cache.warmStart();
            assertEquals(1, start.discarded(WarmStart.Discard.DAMAGED_CHAIN), start::toString);
            assertEquals(written.size() - 1, start.adopted().size());
            assertEquals(usedBefore - 3, cache.stats().usedBlockCount());
        }
    }

    @Test
    void staleRecordsOfReusedBlocksAreDiscarded() throws IOException {
        try (BlockCache cache = open(CAPACITY)) {
            fill(cache);
            checkpoint(cache, false);
            // After the checkpoint: every entry deleted, the blocks reused by other bytes.
            for (final int address : written.keySet()) {
                cache.delete(address);
            }
            final Map<Integer, byte[]> old = new HashMap<>(written);
            written.clear();
            fill(cache);
            written.clear();
            written.putAll(old);
        }
        try (BlockCache cache = open(CAPACITY)) {
            final WarmStart start = cache.warmStart();
            assertTrue(start.warm());
            // Some records name blocks that now hold other entries' bytes or middles; none may come back wrong.
            for (final WarmCatalog.Entry entry : start.adopted()) {
                assertArrayEquals(written.get(entry.address()), read(cache, entry.address()));
            }
            assertTrue(start.discardedTotal() > 0, start::toString);
            assertEquals(start.adopted().size(), cache.stats().entryCount());
        }
    }

    @Test
    void anEntryGrownAfterTheCheckpointComesBackAsItWasThen() throws IOException {
        final int address;
        final byte[] before;
        try (BlockCache cache = open(CAPACITY)) {
            address = insert(cache, BLOCK + 100);
            before = written.get(address);
            checkpoint(cache, false);
            // Grows in place, then links new blocks: the record's block becomes a middle block.
            final int grown = cache.append(address, Unpooled.wrappedBuffer(bytes(3 * BLOCK)));
            assertTrue(grown != address);
        }
        try (BlockCache cache = open(CAPACITY)) {
            final WarmStart start = cache.warmStart();
            assertEquals(1, start.adopted().size(), start::toString);
            assertArrayEquals(before, read(cache, address));
            // The blocks linked after the checkpoint were freed.
            assertEquals(2, cache.stats().usedBlockCount());
        }
    }

    @Test
    void duplicateRecordsClaimBlocksOnce() throws IOException {
        try (BlockCache cache = open(CAPACITY)) {
            final int address = insert(cache, 2 * BLOCK);
            try (WarmCatalog.Writer writer = new WarmCatalog.Writer(cache, 1, 1)) {
                writer.add(1, 0, address, cache.length(address), cache.digest(address), 0);
                writer.add(2, 0, address, cache.length(address), cache.digest(address), 0);
                writer.commit(true);
            }
        }
        try (BlockCache cache = open(CAPACITY)) {
            final WarmStart start = cache.warmStart();
            assertEquals(1, start.adopted().size());
            assertEquals(1, start.discarded(WarmStart.Discard.CLAIMED_TWICE));
        }
    }

    @Test
    void aRegionWhoseSizeChangedStartsCold() throws IOException {
        try (BlockCache cache = open(CAPACITY)) {
            fill(cache);
            checkpoint(cache, true);
        }
        try (BlockCache cache = open(CAPACITY + BUFFER)) {
            final WarmStart start = cache.warmStart();
            assertFalse(start.warm());
            assertNotNull(start.coldReason());
            assertEquals(0, cache.stats().usedBlockCount());
            assertEquals(0, cache.stats().entryCount());
        }
    }

    @Test
    void aCatalogOfAnotherVersionStartsColdAndNothingIsUsed() throws IOException {
        try (BlockCache cache = open(CAPACITY)) {
            fill(cache);
            checkpoint(cache, true);
        }
        try (FileChannel channel = FileChannel.open(catalogFile(), StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, WarmCatalog.VERSION - 1), 8);
        }
        try (BlockCache cache = open(CAPACITY)) {
            final WarmStart start = cache.warmStart();
            assertFalse(start.warm());
            assertEquals(WarmStart.Cold.OTHER_VERSION, start.cold());
            assertTrue(start.coldReason().contains("version " + (WarmCatalog.VERSION - 1)), start.coldReason());
            assertEquals(0, cache.stats().usedBlockCount());
        }
    }

    @Test
    void aDamagedCatalogIsReportedByFileAndPosition() throws IOException {
        try (BlockCache cache = open(CAPACITY)) {
            fill(cache);
            checkpoint(cache, true);
        }
        flipByte(catalogFile(), Files.size(catalogFile()) - 5);
        final List<ILoggingEvent> logged = new ArrayList<>();
        try (BlockCache cache = logging(logged, () -> open(CAPACITY))) {
            final WarmStart start = cache.warmStart();
            assertFalse(start.warm());
            assertEquals(WarmStart.Cold.DAMAGED_CATALOG, start.cold());
            // Not a first start: a catalog was there and its entries are lost.
            assertTrue(logged.stream().anyMatch(e -> e.getLevel() == Level.WARN && e.getFormattedMessage().contains("CRC")),
                logged::toString);
            assertTrue(start.coldReason().contains(catalogFile().toString()) && start.coldReason().contains("CRC"),
                start.coldReason());
            assertEquals(0, cache.stats().usedBlockCount());
        }
    }

    @Test
    void noCatalogStartsColdOverAReopenedRegion() {
        try (BlockCache cache = open(CAPACITY)) {
            fill(cache);
        }
        final List<ILoggingEvent> logged = new ArrayList<>();
        try (BlockCache cache = logging(logged, () -> open(CAPACITY))) {
            assertFalse(cache.warmStart().warm());
            assertEquals(WarmStart.Cold.NO_CATALOG, cache.warmStart().cold());
            assertTrue(logged.stream().noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN)), logged::toString);
            assertTrue(logged.stream().anyMatch(e -> e.getFormattedMessage().contains("NO_CATALOG")), logged::toString);
            assertEquals(0, cache.stats().usedBlockCount());
            final ByteBuf data = Unpooled.wrappedBuffer(bytes(100));
            assertEquals(100, cache.length(cache.insert(data)));
        }
    }

    @Test
    void exactlyOneOfManyThreadsClaimsTheAdoptedEntries() throws Exception {
        try (BlockCache cache = open(CAPACITY)) {
            final int threads = 8;
            final java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
            final java.util.concurrent.atomic.AtomicInteger winners = new java.util.concurrent.atomic.AtomicInteger();
            final List<Thread> claimers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                claimers.add(new Thread(() -> {
                    try {
                        start.await();
                        if (cache.warmStart().claim()) {
                            winners.incrementAndGet();
                        }
                    } catch (final Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            claimers.forEach(Thread::start);
            for (final Thread claimer : claimers) {
                claimer.join();
            }
            assertEquals(1, winners.get());
            assertFalse(cache.warmStart().claim());
        }
    }

    @Test
    void aCacheWithoutWarmRestartReportsItDisabled() {
        try (BlockCache cache = BlockCache.builder().capacity(CAPACITY).bufferLength(BUFFER).registerMBean(false).build()) {
            assertFalse(cache.warmStart().enabled());
            assertThrows(IllegalStateException.class, () -> new WarmCatalog.Writer(cache, 1, 1));
        }
    }

    static {
        // The tests run as the io.streamcache.core module, which reads slf4j only: let it read logback's classes too.
        ModuleLayer.boot().findModule("ch.qos.logback.classic").ifPresent(WarmRestartTest.class.getModule()::addReads);
        ModuleLayer.boot().findModule("ch.qos.logback.core").ifPresent(WarmRestartTest.class.getModule()::addReads);
    }

    /** @return what {@code open} returned, with what RegionAdopter logged meanwhile added to {@code logged}. */
    private static BlockCache logging(final List<ILoggingEvent> logged, final java.util.function.Supplier<BlockCache> open) {
        final Logger logger = (Logger) LoggerFactory.getLogger(RegionAdopter.class);
        final ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        final Level level = logger.getLevel();
        logger.setLevel(Level.INFO);
        logger.addAppender(appender);
        try {
            return open.get();
        } finally {
            logger.detachAppender(appender);
            logger.setLevel(level);
            logged.addAll(appender.list);
        }
    }

    private static void flipByte(final Path file, final long position) throws IOException {
        flipBit(file, position, 0);
    }

    private static void flipBit(final Path file, final long position, final int bit) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(position);
            final int b = raf.read();
            raf.seek(position);
            raf.write(b ^ (1 << bit));
        }
    }
}
