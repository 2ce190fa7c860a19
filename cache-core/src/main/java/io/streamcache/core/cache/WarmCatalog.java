package io.streamcache.core.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The warm catalog (its static methods thread-safe, a {@link Writer} confined to one thread): the file, beside a persistent region, that names the entries a cache held
 * when it was last checkpointed, so that a cache reopened over the same region can adopt them
 * ({@link BlockCache.Builder#warmRestart(Path)}). It lives in its own small file, not in the
 * region, so the region's memory bound is unchanged. Its owner (the segment store) writes it
 * with a {@link Writer}; the cache reads it once, when it is built.
 *
 * <p><b>Layout</b> (all integers little-endian; {@code T} tiers, {@code B} the sum of the tiers'
 * maximum buffer counts, {@code H = 64 + 8 * T + 8 * ceil(B / 64)}):
 * <pre>
 *   0               1               2               3
 *   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 *  +---------------------------------------------------------------+
 *  |                  MAGIC (u64) "SCWARM\0\1"                     |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  VERSION (u32) = 2                            |  8
 *  +---------------------------------------------------------------+
 *  |                  FLAGS (u32): bit 0 CLEAN                     |  12
 *  +---------------------------------------------------------------+
 *  |                  IDENTITY (u64): whose entries (the owner's   |  16
 *  |                  choice: the store's log directory)           |
 *  +---------------------------------------------------------------+
 *  |                  SEQUENCE (u64): checkpoint number            |  24
 *  +---------------------------------------------------------------+
 *  |                  BLOCK_LENGTH (u32)                           |  32
 *  +---------------------------------------------------------------+
 *  |                  BUFFER_LENGTH (u32)                          |  36
 *  +---------------------------------------------------------------+
 *  |                  RECORD_COUNT (u64)                           |  40
 *  +---------------------------------------------------------------+
 *  |                  TIER_COUNT (u32)                             |  48
 *  +---------------------------------------------------------------+
 *  |                  RECORDS_CRC (u32): CRC32C of the records     |  52
 *  +---------------------------------------------------------------+
 *  |  MAX_BUFFERS (u32) of tier 0     | ONLINE_BUFFERS (u32) of 0  |  56
 *  |  ... one such pair per tier, to tier T-1                      |
 *  +---------------------------------------------------------------+
 *  |                  ONLINE (u64 words, ceil(B / 64) of them):    |  56 + 8 * T
 *  |                  bit i of word i / 64: buffer i (its address  |
 *  |                  part, over every tier's maximum) was online  |
 *  +---------------------------------------------------------------+
 *  |                  HEADER_CRC (u32): CRC32C of bytes [0, H - 8) |  H - 8
 *  +---------------------------------------------------------------+
 *  |                  reserved (u32) = 0                           |  H - 4
 *  +---------------------------------------------------------------+
 *  then RECORD_COUNT records of 40 bytes, from H:
 *  +---------------------------------------------------------------+
 *  |  OWNER (u64): the segment id     | POSITION (u64): its offset |
 *  +---------------------------------------------------------------+
 *  |  ADDRESS (u32): the entry's last block | LENGTH (u32)         |
 *  +---------------------------------------------------------------+
 *  |  DIGEST (u64): of the entry's bytes in the region, see EntryDigest |
 *  +---------------------------------------------------------------+
 *  |  AGE (u32): the owner's recency of the entry | reserved (u32) |
 *  +---------------------------------------------------------------+
 * </pre>
 * The geometry is the address space: block and buffer length and each tier's maximum buffer
 * count (a tier of fixed size: its buffer count) fix what every address means, so a cache that
 * differs in any of them cannot read the records. Which buffers were online at the checkpoint
 * (a resizable tier holds memory only for some of its maximum) is a fact, not geometry: a cache
 * reopened at another online size adopts the records of the buffers online in both.
 *
 * CLEAN says the owner wrote the catalog at its clean close, after which the region did not
 * change: every record is then expected to come back. A cache that reads a catalog clears CLEAN
 * in place at once (bytes 12..16 and the header CRC, one sector, forced), since from then on the
 * region changes under the catalog; a later crash therefore never passes for a clean close.
 *
 * <p><b>Atomicity:</b> a writer writes {@code <file>.tmp}, forces it, renames it over the file
 * and forces the directory: a crash leaves the old catalog or the new one, whole. Records may be
 * stale (a checkpoint is a moment, the cache moves on): the cache trusts none of them without
 * checking its chain and digest against the region (see {@code RegionAdopter}).
 *
 * <p><b>Threading:</b> the static methods are thread-safe; a {@link Writer} is confined to one
 * thread.
 */
public final class WarmCatalog {
    /** "SCWARM\0\1" read as a little-endian long. */
    static final long MAGIC = 0x0100_4D52_4157_4353L;
    /** The version this build writes and reads (version 1 had no maximum nor online buffers). */
    public static final int VERSION = 2;
    static final int FLAG_CLEAN = 1;
    static final int FLAGS_OFFSET = 12;
    static final int RECORD_COUNT_OFFSET = 40;
    static final int TIER_COUNT_OFFSET = 48;
    static final int RECORDS_CRC_OFFSET = 52;
    static final int TIERS_OFFSET = 56;
    /** Per tier: MAX_BUFFERS and ONLINE_BUFFERS, a u32 each. */
    static final int TIER_LENGTH = 2 * Integer.BYTES;
    static final int RECORD_LENGTH = 40;
    /** More tiers than this in a header is damage, not a cache. */
    static final int MAX_TIERS = 1 << 16;

    private WarmCatalog() {
    }

    /**
     * One record: an entry of the cache, whose it is and where, and the digest of its bytes.
     *
     * @param owner    the owner's key (a segment id).
     * @param position the owner's position of the entry's first byte (a segment offset).
     * @param address  the entry's address (its last block) when the record was written.
     * @param length   the entry's length then.
     * @param digest   the digest of those bytes ({@link BlockCache#digest(int)}).
     * @param age      the owner's measure of how long ago the entry was last used (the segment
     *                 store's: generations before the checkpoint's), so that it comes back with
     *                 its eviction order; 0 if the owner keeps none.
     */
    public record Entry(long owner, long position, int address, int length, long digest, int age) {
    }

    /**
     * What {@link #read} found: the header's fields and the records.
     *
     * @param maxBufferCounts per tier, the buffers its addresses span (the geometry).
     * @param onlineCounts    per tier, the buffers online at the checkpoint.
     * @param online          one bit per buffer of the address space: online at the checkpoint.
     */
    record Contents(boolean clean, long identity, long sequence, int blockLength, int bufferLength, int[] maxBufferCounts,
                    int[] onlineCounts, long[] online, List<Entry> entries) {
        boolean wasOnline(final int bufferIndex) {
            final int word = bufferIndex >>> 6;
            return word < online.length && (online[word] & (1L << (bufferIndex & 63))) != 0;
        }
    }

    /** A catalog that cannot be used, with the file and position of the damage. */
    static final class DamagedCatalogException extends Exception {
        DamagedCatalogException(final String message) {
            super(message);
        }
    }

    /** A whole catalog of another version (not damage: another build wrote it). */
    static final class OtherVersionException extends Exception {
        OtherVersionException(final String message) {
            super(message);
        }
    }

    /** @return the header's length for {@code tierCount} tiers spanning {@code bufferCount} buffers in all. */
    static long headerLength(final int tierCount, final long bufferCount) {
        return TIERS_OFFSET + (long) TIER_LENGTH * tierCount + ((bufferCount + 63) >>> 6) * Long.BYTES + Long.BYTES;
    }

    static int onlineOffset(final int tierCount) {
        return TIERS_OFFSET + TIER_LENGTH * tierCount;
    }

    /**
     * Reads a whole catalog and checks its header, version and checksums.
     *
     * @throws NoSuchFileException     if there is none.
     * @throws DamagedCatalogException if it cannot be used; the message names the file, the
     *                                 position and what is wrong.
     */
    static Contents read(final Path file) throws IOException, DamagedCatalogException, OtherVersionException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            final long size = channel.size();
            final ByteBuffer fixed = readFully(channel, 0, (int) Math.min(size, TIERS_OFFSET), file);
            if (size < TIERS_OFFSET) {
                throw new DamagedCatalogException("warm catalog " + file + " is " + size + " bytes long, shorter than its header");
            }
            if (fixed.getLong(0) != MAGIC) {
                throw new DamagedCatalogException("warm catalog " + file + " at position 0: magic 0x" + Long.toHexString(fixed.getLong(0))
                    + " is not a warm catalog's");
            }
            final int version = fixed.getInt(8);
            if (version != VERSION) {
                throw new OtherVersionException("warm catalog " + file + " at position 8: version " + version
                    + ", this build reads version " + VERSION);
            }
            final int tierCount = fixed.getInt(TIER_COUNT_OFFSET);
            if (tierCount < 1 || tierCount > MAX_TIERS) {
                throw new DamagedCatalogException("warm catalog " + file + " at position " + TIER_COUNT_OFFSET + ": tier count "
                    + tierCount + " is not valid");
            }
            final int onlineOffset = onlineOffset(tierCount);
            if (size < onlineOffset) {
                throw new DamagedCatalogException("warm catalog " + file + " is " + size + " bytes long, shorter than its "
                    + tierCount + " tiers' table");
            }
            final ByteBuffer table = readFully(channel, 0, onlineOffset, file);
            final int[] maxBufferCounts = new int[tierCount];
            final int[] onlineCounts = new int[tierCount];
            long bufferCount = 0;
            for (int t = 0; t < tierCount; t++) {
                maxBufferCounts[t] = table.getInt(TIERS_OFFSET + TIER_LENGTH * t);
                onlineCounts[t] = table.getInt(TIERS_OFFSET + TIER_LENGTH * t + Integer.BYTES);
                bufferCount += Integer.toUnsignedLong(maxBufferCounts[t]);
            }
            final long headerLong = headerLength(tierCount, bufferCount);
            if (size < headerLong || headerLong > Integer.MAX_VALUE) {
                throw new DamagedCatalogException("warm catalog " + file + " is " + size + " bytes long, shorter than its "
                    + headerLong + "-byte header (tiers' table at position " + TIERS_OFFSET + ")");
            }
            final int headerLength = (int) headerLong;
            final ByteBuffer header = readFully(channel, 0, headerLength, file);
            final CRC32C crc = new CRC32C();
            crc.update(header.duplicate().position(0).limit(headerLength - Long.BYTES));
            if ((int) crc.getValue() != header.getInt(headerLength - Long.BYTES)) {
                throw new DamagedCatalogException("warm catalog " + file + ": header [0, " + (headerLength - Long.BYTES)
                    + ") fails its CRC at position " + (headerLength - Long.BYTES));
            }
            final long count = header.getLong(RECORD_COUNT_OFFSET);
            if (count < 0 || count > (size - headerLength) / RECORD_LENGTH || size != headerLength + count * RECORD_LENGTH) {
                throw new DamagedCatalogException("warm catalog " + file + " at position " + RECORD_COUNT_OFFSET + ": " + count
                    + " records of " + RECORD_LENGTH + " bytes do not make its length " + size);
            }
            final long[] online = new long[(int) ((bufferCount + 63) >>> 6)];
            for (int w = 0; w < online.length; w++) {
                online[w] = header.getLong(onlineOffset + Long.BYTES * w);
            }
            final List<Entry> entries = new ArrayList<>((int) count);
            final CRC32C recordsCrc = new CRC32C();
            final ByteBuffer chunk = ByteBuffer.allocateDirect(RECORD_LENGTH * 4096).order(ByteOrder.LITTLE_ENDIAN);
            long position = headerLength;
            while (position < size) {
                chunk.clear().limit((int) Math.min(chunk.capacity(), size - position));
                while (chunk.hasRemaining()) {
                    if (channel.read(chunk, position + chunk.position()) < 0) {
                        throw new DamagedCatalogException("warm catalog " + file + " ends early at position "
                            + (position + chunk.position()));
                    }
                }
                chunk.flip();
                recordsCrc.update(chunk.duplicate());
                for (int i = 0; i < chunk.limit(); i += RECORD_LENGTH) {
                    entries.add(new Entry(chunk.getLong(i), chunk.getLong(i + 8), chunk.getInt(i + 16), chunk.getInt(i + 20),
                        chunk.getLong(i + 24), chunk.getInt(i + 32)));
                }
                position += chunk.limit();
            }
            if ((int) recordsCrc.getValue() != header.getInt(RECORDS_CRC_OFFSET)) {
                throw new DamagedCatalogException("warm catalog " + file + ": records [" + headerLength + ", " + size
                    + ") fail their CRC (at position " + RECORDS_CRC_OFFSET + ")");
            }
            return new Contents((header.getInt(FLAGS_OFFSET) & FLAG_CLEAN) != 0, header.getLong(16), header.getLong(24),
                header.getInt(32), header.getInt(36), maxBufferCounts, onlineCounts, online, entries);
        }
    }

    /**
     * Clears the CLEAN flag of a catalog {@link #read} accepted, in place, and forces the file.
     */
    static void markDirty(final Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final int tierCount = readFully(channel, 0, TIERS_OFFSET, file).getInt(TIER_COUNT_OFFSET);
            final ByteBuffer table = readFully(channel, 0, onlineOffset(tierCount), file);
            long bufferCount = 0;
            for (int t = 0; t < tierCount; t++) {
                bufferCount += Integer.toUnsignedLong(table.getInt(TIERS_OFFSET + TIER_LENGTH * t));
            }
            final int headerLength = (int) headerLength(tierCount, bufferCount);
            final ByteBuffer header = readFully(channel, 0, headerLength, file);
            header.putInt(FLAGS_OFFSET, header.getInt(FLAGS_OFFSET) & ~FLAG_CLEAN);
            sealHeader(header, headerLength);
            header.position(0).limit(headerLength);
            while (header.hasRemaining()) {
                channel.write(header, header.position());
            }
            channel.force(false);
        }
    }

    private static void sealHeader(final ByteBuffer header, final int headerLength) {
        final CRC32C crc = new CRC32C();
        crc.update(header.duplicate().position(0).limit(headerLength - Long.BYTES));
        header.putInt(headerLength - Long.BYTES, (int) crc.getValue());
        header.putInt(headerLength - Integer.BYTES, 0);
    }

    private static ByteBuffer readFully(final FileChannel channel, final long position, final int length, final Path file)
        throws IOException {
        final ByteBuffer buffer = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                break;
            }
        }
        return buffer.flip().limit(length);
    }

    /**
     * Writes a catalog for a cache built with {@link BlockCache.Builder#warmRestart(Path)}: the
     * records one by one, then {@link #commit} puts the whole file in place atomically. Closing a
     * writer that was not committed removes its temporary file and leaves the old catalog.
     *
     * <p><b>Threading:</b> confined to one thread. Allocation: one 128 KB buffer per writer.
     */
    public static final class Writer implements AutoCloseable {
        private final Path file;
        private final Path temporary;
        private final FileChannel channel;
        private final BlockCache cache;
        private final ByteBuffer header;
        private final int headerLength;
        private final ByteBuffer records = ByteBuffer.allocateDirect(RECORD_LENGTH * 4096).order(ByteOrder.LITTLE_ENDIAN);
        private final CRC32C recordsCrc = new CRC32C();
        private long position;
        private long count;
        private boolean committed;

        /**
         * @param cache    a cache built with a warm catalog; its geometry goes in the header.
         * @param identity the owner's identity, checked by the owner when the cache reopens.
         * @param sequence the checkpoint's number.
         * @throws IllegalStateException if the cache has no warm catalog.
         */
        public Writer(final BlockCache cache, final long identity, final long sequence) throws IOException {
            Objects.requireNonNull(cache, "cache");
            final WarmStart start = cache.warmStart();
            if (!start.enabled()) {
                throw new IllegalStateException("cache " + cache.name() + " was built without warmRestart(catalog)");
            }
            this.cache = cache;
            this.file = start.catalog();
            this.temporary = file.resolveSibling(file.getFileName() + ".tmp");
            final int tierCount = cache.tierCount();
            long bufferCount = 0;
            for (int t = 0; t < tierCount; t++) {
                bufferCount += cache.tierMaxCapacity(t) / cache.bufferLength();
            }
            this.headerLength = (int) headerLength(tierCount, bufferCount);
            this.header = ByteBuffer.allocate(headerLength).order(ByteOrder.LITTLE_ENDIAN);
            header.putLong(0, MAGIC).putInt(8, VERSION).putLong(16, identity).putLong(24, sequence)
                .putInt(32, cache.blockLength()).putInt(36, cache.bufferLength()).putInt(TIER_COUNT_OFFSET, tierCount);
            final Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            this.channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
            this.position = headerLength;
        }

        /**
         * Adds one record; see {@link Entry} for the fields.
         */
        public void add(final long owner, final long entryPosition, final int address, final int length, final long digest,
                        final int age) throws IOException {
            if (records.remaining() < RECORD_LENGTH) {
                flush();
            }
            records.putLong(owner).putLong(entryPosition).putInt(address).putInt(length).putLong(digest).putInt(age).putInt(0);
            count++;
        }

        /**
         * @return records added so far.
         */
        public long count() {
            return count;
        }

        private void flush() throws IOException {
            records.flip();
            recordsCrc.update(records.duplicate());
            while (records.hasRemaining()) {
                position += channel.write(records, position);
            }
            records.clear();
        }

        /**
         * Writes the header, forces the file, renames it over the catalog and forces the directory.
         *
         * @param clean whether this is the owner's clean close (nothing changes in the region after it).
         */
        public void commit(final boolean clean) throws IOException {
            flush();
            putOnlineBuffers();
            header.putInt(FLAGS_OFFSET, clean ? FLAG_CLEAN : 0).putLong(RECORD_COUNT_OFFSET, count)
                .putInt(RECORDS_CRC_OFFSET, (int) recordsCrc.getValue());
            sealHeader(header, headerLength);
            header.position(0).limit(headerLength);
            while (header.hasRemaining()) {
                channel.write(header, header.position());
            }
            channel.force(false);
            channel.close();
            try {
                Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (final AtomicMoveNotSupportedException e) {
                Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
            }
            committed = true;
            final Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                try (FileChannel directory = FileChannel.open(parent, StandardOpenOption.READ)) {
                    directory.force(true);
                } catch (final IOException ignored) {
                    // Some file systems cannot open a directory for reading: the rename stands.
                }
            }
        }

        /**
         * The tiers' table and the online bitmap, read at the commit: every record added lies in
         * a buffer online then unless its buffer went offline meanwhile (its entries were moved
         * out first, so such a record is stale anyway and the reopen discards it).
         */
        private void putOnlineBuffers() {
            final int tierCount = cache.tierCount();
            final int onlineOffset = onlineOffset(tierCount);
            int first = 0;
            for (int t = 0; t < tierCount; t++) {
                final int max = (int) (cache.tierMaxCapacity(t) / cache.bufferLength());
                int online = 0;
                for (int i = first; i < first + max; i++) {
                    if (cache.isBufferOnline(i)) {
                        online++;
                        final int word = onlineOffset + (i >>> 6) * Long.BYTES;
                        header.putLong(word, header.getLong(word) | 1L << (i & 63));
                    }
                }
                header.putInt(TIERS_OFFSET + TIER_LENGTH * t, max).putInt(TIERS_OFFSET + TIER_LENGTH * t + Integer.BYTES, online);
                first += max;
            }
        }

        @Override
        public void close() throws IOException {
            if (channel.isOpen()) {
                channel.close();
            }
            if (!committed) {
                Files.deleteIfExists(temporary);
            }
        }
    }
}
