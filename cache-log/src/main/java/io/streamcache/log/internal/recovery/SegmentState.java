package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationRows;
import io.streamcache.log.internal.location.LocationMemory;

import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;
import java.util.TreeMap;

/**
 * One segment while {@link LogReplay} replays the log: its bounds, seal, deletion and location
 * index. Confined to the replay: a segment's records are applied by one thread at a time (the
 * replay's, or the one lane its id falls in).
 */
final class SegmentState {
    final int id;
    final String name;
    long loggedFrom;
    long loggedFromFile;
    /** The address of its location index's row ({@link LocationRows}); 0 once deleted. */
    long locations;
    long start;
    long length;
    boolean sealed;
    boolean deleted;
    /** The serial of the last SNAPSHOT that listed it, in a quick check. */
    int listedIn;
    /** The name's UTF-8 bytes, once a quick check needed them. */
    private byte[] nameBytes;
    /** {@link TableDigest#nameHash} of the name. */
    final long nameHash;
    /** The {@link FileEnds} that last noted this segment, and its index there. */
    FileEnds endsIn;
    int endsIndex;
    /**
     * Locations the index cannot take in log order, by offset: compaction copies of bytes
     * before {@link #loggedFrom} (their original's file is gone), and the records a RESYNC
     * took out of the index; {@code {length, fileNumber, position}}. Null until needed.
     */
    TreeMap<Long, long[]> below;

    SegmentState(final int id, final String name, final long start, final long length, final boolean sealed,
                 final long fileNumber, final LocationMemory memory) {
        this.id = id;
        this.name = name;
        this.start = start;
        this.length = length;
        this.sealed = sealed;
        this.loggedFrom = length;
        this.loggedFromFile = fileNumber;
        this.locations = LocationRows.allocate(memory, length);
        this.nameHash = TableDigest.nameHash(name);
    }

    /** @return this segment's term in the table digest, as its bounds stand. */
    long hash() {
        return TableDigest.entry(id, sealed, start, length, nameHash);
    }

    boolean nameIs(final DirectBuffer payload, final int offset, final int length) {
        byte[] bytes = nameBytes;
        if (bytes == null) {
            bytes = name.getBytes(StandardCharsets.UTF_8);
            nameBytes = bytes;
        }
        if (bytes.length != length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (payload.getByte(offset + i) != bytes[i]) {
                return false;
            }
        }
        return true;
    }
}
