package io.streamcache.core.cache;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a cache built with {@link BlockCache.Builder#warmRestart(Path)} found when it was built,
 * immutable but for the one-time {@link #claim()} and readable from any thread:
 * whether it came back warm, the entries it adopted from its region, and the catalog records it
 * discarded, by reason. Immutable, except for the one-time {@link #claim()}.
 *
 * <p><b>Ownership of the adopted entries.</b> Each entry of {@link #adopted()} is live in the
 * cache at {@link WarmCatalog.Entry#address()}, {@link WarmCatalog.Entry#length()} bytes long,
 * its bytes those the record's digest was taken of. The cache does not know what they mean: one
 * owner (the segment store built over the cache) {@link #claim() claims} them, keeps those it
 * can use and deletes the rest with {@link BlockCache#delete(int)}. Until then they hold their
 * blocks.
 *
 * <p><b>Threading:</b> safe to read from any thread (immutable, published by the cache's
 * construction); {@link #claim()} is atomic.
 */
public final class WarmStart {
    /** Why a cache built for a warm restart started cold. */
    public enum Cold {
        /** The cache was built without {@link BlockCache.Builder#warmRestart(Path)}. */
        NOT_CONFIGURED,
        /** There was no catalog (a first start, or the last run never checkpointed). Logged at INFO. */
        NO_CATALOG,
        /** The catalog is damaged: a bad magic, length, header or records CRC. Logged at WARN, with its file and position. */
        DAMAGED_CATALOG,
        /** The catalog could not be read (an I/O error) or marked in use. Logged at WARN. */
        UNREADABLE_CATALOG,
        /** The catalog is whole but of another version (another build wrote it). Logged at INFO. */
        OTHER_VERSION,
        /** The catalog describes another geometry: block or buffer length, tiers or their maximum buffer counts. Logged at INFO. */
        OTHER_GEOMETRY,
        /** No region was reopened as it was (new files, or files of another length). Logged at INFO. */
        NO_REGION_KEPT
    }

    /** Why a catalog record was not adopted. */
    public enum Discard {
        /** Its blocks are in a tier whose region was not reopened (created afresh: the file was missing or its size changed). */
        REGION_NOT_KEPT,
        /** Its blocks are in a buffer of a resizable tier that is not online in the reopened cache (it reopened smaller). */
        BUFFER_OFFLINE,
        /** Its chain is not an entry of that length: a free or misplaced block, a bad link, a wrong length. */
        DAMAGED_CHAIN,
        /** A block of its chain belongs to an entry adopted before it. */
        CLAIMED_TWICE,
        /** Its bytes do not match its digest: reused blocks, damaged bytes. */
        DIGEST_MISMATCH
    }

    private static final WarmStart NONE = new WarmStart(null, false, Cold.NOT_CONFIGURED, "warm restart not configured", false, 0,
        0, 0, List.of(), new long[Discard.values().length], 0);

    private final Path catalog;
    private final boolean warm;
    private final Cold cold;
    private final String coldReason;
    private final boolean cleanShutdown;
    private final long identity;
    private final long sequence;
    private final long catalogEntries;
    private final List<WarmCatalog.Entry> adopted;
    private final long[] discarded;
    private final long nanos;
    private final AtomicBoolean claimed = new AtomicBoolean();

    WarmStart(final Path catalog, final boolean warm, final Cold cold, final String coldReason, final boolean cleanShutdown,
              final long identity, final long sequence, final long catalogEntries, final List<WarmCatalog.Entry> adopted,
              final long[] discarded, final long nanos) {
        this.catalog = catalog;
        this.warm = warm;
        this.cold = cold;
        this.coldReason = coldReason;
        this.cleanShutdown = cleanShutdown;
        this.identity = identity;
        this.sequence = sequence;
        this.catalogEntries = catalogEntries;
        this.adopted = List.copyOf(adopted);
        this.discarded = discarded.clone();
        this.nanos = nanos;
    }

    static WarmStart none() {
        return NONE;
    }

    /**
     * @return whether the cache was built with a warm catalog.
     */
    public boolean enabled() {
        return catalog != null;
    }

    /**
     * @return the catalog's file, or null if not {@link #enabled()}.
     */
    public Path catalog() {
        return catalog;
    }

    /**
     * @return whether a catalog was read and matched the cache, so its records were tried.
     */
    public boolean warm() {
        return warm;
    }

    /**
     * @return why the cache started cold (no catalog, a damaged one, another geometry or version,
     *         no reopened region), or null if it came back {@link #warm()}.
     */
    public String coldReason() {
        return coldReason;
    }

    /**
     * @return why the cache started cold, as a reason a program can act on ({@link #coldReason()}
     *         says it for a person: file, position, figures), or null if it came back {@link #warm()}.
     */
    public Cold cold() {
        return cold;
    }

    /**
     * @return whether the catalog was written at a clean close (every record was then expected back).
     */
    public boolean cleanShutdown() {
        return cleanShutdown;
    }

    /**
     * @return the identity the catalog's writer gave (0 if none was read).
     */
    public long identity() {
        return identity;
    }

    /**
     * @return the catalog's checkpoint number (0 if none was read).
     */
    public long sequence() {
        return sequence;
    }

    /**
     * @return records in the catalog (0 if none was read).
     */
    public long catalogEntries() {
        return catalogEntries;
    }

    /**
     * @return the entries adopted, live in the cache, in catalog order.
     */
    public List<WarmCatalog.Entry> adopted() {
        return adopted;
    }

    /**
     * @return records discarded for {@code reason}.
     */
    public long discarded(final Discard reason) {
        return discarded[reason.ordinal()];
    }

    /**
     * @return records discarded for any reason.
     */
    public long discardedTotal() {
        return Arrays.stream(discarded).sum();
    }

    /**
     * @return nanoseconds the adoption took (reading the catalog, checking chains and digests, rebuilding free lists).
     */
    public long nanos() {
        return nanos;
    }

    /**
     * Takes ownership of the {@link #adopted()} entries: true for the first caller only.
     */
    public boolean claim() {
        return claimed.compareAndSet(false, true);
    }

    @Override
    public String toString() {
        final StringBuilder s = new StringBuilder("WarmStart{");
        if (!enabled()) {
            return s.append("disabled}").toString();
        }
        s.append("catalog=").append(catalog).append(", ");
        if (!warm) {
            return s.append("cold (").append(cold).append("): ").append(coldReason).append('}').toString();
        }
        s.append("clean=").append(cleanShutdown).append(", sequence=").append(sequence).append(", records=").append(catalogEntries)
            .append(", adopted=").append(adopted.size());
        for (final Discard reason : Discard.values()) {
            if (discarded[reason.ordinal()] > 0) {
                s.append(", ").append(reason.name().toLowerCase()).append('=').append(discarded[reason.ordinal()]);
            }
        }
        return s.append(", ms=").append(nanos / 1_000_000).append('}').toString();
    }
}
