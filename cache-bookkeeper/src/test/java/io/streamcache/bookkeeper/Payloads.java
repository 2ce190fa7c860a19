package io.streamcache.bookkeeper;

import java.util.SplittableRandom;

/**
 * The bytes of entry {@code (ledger, entry)} in the cluster tests, a function of the two ids so
 * that any reader can check any copy byte for byte without keeping what was written: stateless.
 * Lengths run from 1 B to 1 MiB, most of them small, as a broker's records are.
 */
final class Payloads {

    private static final int[] LENGTHS = {1, 100, 1000, 4096, 10_000, 65_536, 300_000, 1 << 20};
    /** Cumulative weights out of 1000 for the lengths above. */
    private static final int[] WEIGHTS = {100, 400, 700, 820, 920, 975, 990, 1000};

    private Payloads() {
    }

    static byte[] payload(final long ledgerId, final long entryId) {
        final SplittableRandom random = new SplittableRandom(ledgerId * 1_000_003L + entryId);
        final int pick = random.nextInt(1000);
        int i = 0;
        while (pick >= WEIGHTS[i]) {
            i++;
        }
        final byte[] bytes = new byte[LENGTHS[i]];
        random.nextBytes(bytes);
        return bytes;
    }
}
