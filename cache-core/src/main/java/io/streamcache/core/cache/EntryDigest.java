package io.streamcache.core.cache;

import io.streamcache.core.internal.layout.BlockMetadataDescriptor;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * The 64-bit digest of an entry's bytes that a warm catalog records and a warm restart checks
 * ({@link WarmCatalog}, {@link RegionAdopter}). Stateless and thread-safe.
 *
 * <p>The digest is defined over the chain as the cache holds it, walked backwards: the last
 * block's bytes first, then the block before it, down to the first block. Each block's bytes are
 * hashed in four interleaved lanes of 8-byte words (native byte order, as the region holds them),
 * the lanes folded into one value with the bytes that do not fill a stripe, and that value seeds
 * the next block; the entry's length is mixed in first and last. It detects damage, not attacks:
 * a region whose bytes changed since the digest (a block reused, a flipped bit, a torn write)
 * matches with a probability of about 2^-64.
 *
 * <p>Why not a CRC: hashing runs once per entry at each checkpoint and over every cached byte on a
 * warm reopen; four independent multiply lanes run at several GB/s on one core without the
 * intrinsics a CRC needs, and nothing reads the digest but this class.
 */
final class EntryDigest {
    private static final long P1 = 0x9E37_79B1_85EB_CA87L;
    private static final long P2 = 0xC2B2_AE3D_27D4_EB4FL;
    private static final long P3 = 0x1656_67B1_9E37_79F9L;
    private static final long P4 = 0x85EB_CA77_C2B2_AE63L;
    private static final long P5 = 0x27D4_EB2F_1656_67C5L;
    private static final int STRIPE = 32;

    private EntryDigest() {
    }

    /**
     * @param table   the cache's blocks.
     * @param address the block that holds the entry's last byte (its last block, or for a prefix
     *                of a longer entry, the block holding the prefix's last byte).
     * @param length  bytes of the entry (or prefix) to digest; the chain from {@code address}
     *                backwards must have {@code table.blockCount(length)} used blocks.
     * @return the digest.
     */
    static long of(final BlockTable table, final int address, final int length) {
        final int count = table.blockCount(length);
        long h = mix(length * P3 + P5);
        int current = address;
        int fill = length - (count - 1) * table.blockLength;
        for (int i = 0; i < count; i++) {
            final long memory = table.bufferOf(current).address + table.blockOffset(current);
            h = block(h, memory, fill);
            fill = table.blockLength;
            if (i + 1 < count) {
                current = BlockMetadataDescriptor.previousAddress(table.word(current));
            }
        }
        return mix(h ^ length);
    }

    /** Hashes {@code n} bytes at native {@code address}, seeded with {@code seed}. */
    static long block(final long seed, final long address, final int n) {
        long a = seed + P1 + P2;
        long b = seed + P2;
        long c = seed;
        long d = seed - P1;
        int i = 0;
        for (; i + STRIPE <= n; i += STRIPE) {
            a = round(a, UNSAFE.getLong(address + i));
            b = round(b, UNSAFE.getLong(address + i + 8));
            c = round(c, UNSAFE.getLong(address + i + 16));
            d = round(d, UNSAFE.getLong(address + i + 24));
        }
        long h = Long.rotateLeft(a, 1) + Long.rotateLeft(b, 7) + Long.rotateLeft(c, 12) + Long.rotateLeft(d, 18);
        for (; i + Long.BYTES <= n; i += Long.BYTES) {
            h = Long.rotateLeft(h ^ round(0, UNSAFE.getLong(address + i)), 27) * P1 + P4;
        }
        for (; i < n; i++) {
            h = Long.rotateLeft(h ^ (UNSAFE.getByte(address + i) & 0xFFL) * P5, 11) * P1;
        }
        return mix(h + n);
    }

    private static long round(final long accumulator, final long value) {
        return Long.rotateLeft(accumulator + value * P2, 31) * P1;
    }

    /** SplitMix64's finalizer. */
    private static long mix(final long value) {
        long z = value;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }
}
