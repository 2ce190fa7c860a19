package io.streamcache.core.cache;

/**
 * An immutable exception, thrown by {@link BlockCache#relocate(int, int)} when every block of the entry is already in the
 * target tier: there is nothing to move. The cache is left unchanged. A programming error (the
 * caller should have checked {@link BlockCache#tierOf(int)}), hence an
 * {@link IllegalArgumentException}.
 */
public final class SameTierException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final int address;
    private final int tier;

    public SameTierException(final int address, final int tier, final String detail) {
        super("address=0x" + Integer.toHexString(address) + " tier=" + tier + ": " + detail);
        this.address = address;
        this.tier = tier;
    }

    /**
     * @return the address passed to relocate.
     */
    public int address() {
        return address;
    }

    /**
     * @return the target tier passed to relocate.
     */
    public int tier() {
        return tier;
    }
}
