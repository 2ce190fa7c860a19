package io.streamcache.core;

/**
 * An immutable exception, thrown when an operation is given an address that does not name the last block of a live
 * entry. {@link #reason()} says which check failed. The cache is left unchanged.
 */
public final class InvalidAddressException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Which check rejected the address.
     */
    public enum Reason {
        /** Address 0 is reserved and never names an entry. */
        NULL_ADDRESS,
        /** The buffer part of the address is past the last buffer of the cache. */
        OUT_OF_RANGE,
        /** The block part names block 0 of a buffer, which holds metadata. */
        METADATA_BLOCK,
        /** The block is free: the entry was deleted (a stale address). */
        FREED_BLOCK,
        /** The block is in use but is not the last block of its entry (a stale address, or an address from before an append). */
        NOT_LAST_BLOCK
    }

    private final int address;
    private final Reason reason;

    public InvalidAddressException(final int address, final Reason reason, final String detail) {
        super("address=0x" + Integer.toHexString(address) + " " + reason + ": " + detail);
        this.address = address;
        this.reason = reason;
    }

    /**
     * @return the rejected address.
     */
    public int address() {
        return address;
    }

    /**
     * @return which check failed.
     */
    public Reason reason() {
        return reason;
    }
}
