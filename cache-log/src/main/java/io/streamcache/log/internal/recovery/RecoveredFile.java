package io.streamcache.log.internal.recovery;

import java.nio.file.Path;
import java.util.Map;

/**
 * One log file as recovery found it; an immutable value.
 *
 * @param fileNumber  its number.
 * @param path        its path.
 * @param fileLength  FILE_LENGTH from its header.
 * @param end         why its scan stopped.
 * @param endPosition where its valid records end (in the tail: where the log was cut).
 * @param recordCount valid records replayed from it.
 * @param dataLength  payload bytes of its DATA records.
 * @param liveLength  those of them still live: not truncated, not of a deleted segment.
 * @param dataEnds    for every live segment with DATA records in the file (truncated ones
 *                    included), segment id to the end offset of its last DATA record in it: the
 *                    file's data are dead once every such segment's start offset reaches its end.
 */
public record RecoveredFile(long fileNumber, Path path, long fileLength, ScanEnd end, long endPosition, long recordCount,
                            long dataLength, long liveLength, Map<Integer, Long> dataEnds) {
    public RecoveredFile {
        dataEnds = dataEnds instanceof DataEnds ? dataEnds : Map.copyOf(dataEnds);
    }

    /**
     * Hands every entry of {@link #dataEnds()} to {@code visitor}, without boxing when recovery
     * built them.
     */
    public void forEachDataEnd(final DataEndVisitor visitor) {
        if (dataEnds instanceof DataEnds packed) {
            packed.forEachEnd(visitor::accept);
        } else {
            dataEnds.forEach((id, end) -> visitor.accept(id, end));
        }
    }

    /** Receives one entry of {@link #dataEnds()}. */
    @FunctionalInterface
    public interface DataEndVisitor {
        void accept(int segmentId, long end);
    }
}
