package io.streamcache.bookkeeper;

import io.streamcache.core.memory.DirectMemoryRegion;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The storage's default cache size: what DbLedgerStorage would take for its write and
 * read-ahead caches under the same configuration, so that a bookie starts wherever
 * DbLedgerStorage's does (BookKeeper's test harness runs several in one JVM with 4 MiB each).
 */
class StreamcacheStorageSettingsTest {
    private static final long MIB = 1L << 20;

    @Test
    void shouldTakeDbLedgerStoragesTwoCachesWhenTheyAreSet() {
        final ServerConfiguration conf = new ServerConfiguration();
        conf.setProperty(StreamcacheStorageSettings.DB_WRITE_CACHE_MB, 4);
        conf.setProperty(StreamcacheStorageSettings.DB_READ_AHEAD_CACHE_MB, 4);
        assertEquals(8 * MIB, StreamcacheStorageSettings.defaultCacheBytes(conf, 1L << 30));
        assertEquals(8 * MIB, StreamcacheStorageSettings.from(conf).cacheBytes());
    }

    @Test
    void shouldTakeAQuarterOfTheDirectMemoryLimitForEachCacheNotSet() {
        final ServerConfiguration none = new ServerConfiguration();
        assertEquals(512 * MIB, StreamcacheStorageSettings.defaultCacheBytes(none, 1L << 30));
        final ServerConfiguration writeOnly = new ServerConfiguration();
        writeOnly.setProperty(StreamcacheStorageSettings.DB_WRITE_CACHE_MB, 64);
        assertEquals(64 * MIB + 256 * MIB, StreamcacheStorageSettings.defaultCacheBytes(writeOnly, 1L << 30));
        // Whole 2 MiB buffers, at least one.
        assertEquals(4 * MIB, StreamcacheStorageSettings.defaultCacheBytes(none, 9 * MIB));
        assertEquals(2 * MIB, StreamcacheStorageSettings.defaultCacheBytes(none, MIB));
        final long derived = StreamcacheStorageSettings.from(none).cacheBytes();
        assertTrue(derived <= DirectMemoryRegion.directMemoryLimit() / 2 + 2 * MIB, "half of this JVM's limit: " + derived);
    }

    @Test
    void shouldTakeItsOwnSettingOverAnyDerivation() {
        final ServerConfiguration conf = new ServerConfiguration();
        conf.setProperty(StreamcacheStorageSettings.DB_WRITE_CACHE_MB, 4);
        conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 48 * MIB);
        assertEquals(48 * MIB, StreamcacheStorageSettings.from(conf).cacheBytes());
    }

    @Test
    void shouldLendCopiesUnlessZeroCopyReadsIsSet() {
        final ServerConfiguration conf = new ServerConfiguration();
        assertFalse(StreamcacheStorageSettings.from(conf).zeroCopyReads(), "copies by default, as DbLedgerStorage returns");
        conf.setProperty(StreamcacheStorageSettings.ZERO_COPY_READS, true);
        assertTrue(StreamcacheStorageSettings.from(conf).zeroCopyReads());
    }
}
