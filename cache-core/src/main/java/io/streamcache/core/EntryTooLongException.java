package io.streamcache.core;

/**
 * An immutable exception, thrown when an insert, append or replace would make an entry longer than the cache's
 * configured maximum entry length. The entry is left unchanged.
 */
public final class EntryTooLongException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public EntryTooLongException(final long length, final int maxEntryLength) {
        super("length=" + length + " exceeds maxEntryLength=" + maxEntryLength);
    }
}
