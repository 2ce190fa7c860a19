package io.streamcache.segmentstore;

import io.streamcache.log.internal.AggregatingWriter;

/**
 * The rules a segment name must follow, checked before anything is created or logged; stateless
 * and thread-safe.
 *
 * <p>A name is stored in the log as UTF-8 (a CREATE record's payload, a SNAPSHOT entry): it must
 * be non-empty, well-formed UTF-16 (every high surrogate followed by a low one, no low surrogate
 * alone: Java's encoder would write an unpaired surrogate as {@code ?}, so two distinct names
 * would come back from the log as one, and recovery would refuse the log), and at most
 * {@link #MAX_NAME_LENGTH} bytes of UTF-8 (a CREATE record fits in one page). The same rules
 * hold for a store without a log, so a name valid in one store is valid in every store.
 */
public final class SegmentNames {
    /** Longest name, in bytes of UTF-8: 4072, a page less a record header. */
    public static final int MAX_NAME_LENGTH = AggregatingWriter.MAX_NAME_LENGTH;

    private static final int QUOTE_LENGTH = 64;

    private SegmentNames() {
    }

    /**
     * Checks a name without allocating (unless it is invalid).
     *
     * @throws SegmentNameException if the name is empty, has an unpaired surrogate, or is longer
     *                              than {@link #MAX_NAME_LENGTH} bytes of UTF-8.
     * @throws NullPointerException if {@code name} is null.
     */
    public static void check(final String name) {
        if (name.isEmpty()) {
            throw new SegmentNameException(name, "is empty");
        }
        long utf8 = 0;
        final int n = name.length();
        for (int i = 0; i < n; i++) {
            final char c = name.charAt(i);
            if (c < 0x80) {
                utf8++;
            } else if (c < 0x800) {
                utf8 += 2;
            } else if (Character.isHighSurrogate(c)) {
                if (i + 1 == n || !Character.isLowSurrogate(name.charAt(i + 1))) {
                    throw new SegmentNameException(name, "has an unpaired high surrogate at index=" + i
                        + " (not well-formed UTF-16, so not encodable as UTF-8)");
                }
                utf8 += 4;
                i++;
            } else if (Character.isLowSurrogate(c)) {
                throw new SegmentNameException(name, "has an unpaired low surrogate at index=" + i
                    + " (not well-formed UTF-16, so not encodable as UTF-8)");
            } else {
                utf8 += 3;
            }
        }
        if (utf8 > MAX_NAME_LENGTH) {
            throw new SegmentNameException(name, "is " + utf8 + " bytes of UTF-8, more than maxNameLength=" + MAX_NAME_LENGTH);
        }
    }

    /** A printable excerpt of a name for messages: escapes surrogates and control characters, cut at 64 characters. */
    static String quote(final String name) {
        final StringBuilder out = new StringBuilder(Math.min(name.length(), QUOTE_LENGTH) + 8).append('"');
        for (int i = 0; i < name.length() && i < QUOTE_LENGTH; i++) {
            final char c = name.charAt(i);
            if (Character.isSurrogate(c) || Character.isISOControl(c)) {
                out.append(String.format("\\u%04X", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
        if (name.length() > QUOTE_LENGTH) {
            out.append("... (").append(name.length()).append(" chars)");
        }
        return out.toString();
    }
}
