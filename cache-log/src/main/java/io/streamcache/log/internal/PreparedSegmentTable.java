package io.streamcache.log.internal;

import io.streamcache.log.internal.recovery.RecoveredFile;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;

import java.util.List;
import java.util.Objects;

/**
 * The writer's segment table seeded from what recovery found, built before the writer starts
 * and on another thread than the one that starts it: the store's opening seeds it on its helper
 * thread while the opening thread puts the restored segments into the store's table (the
 * seed, 1.1 million data ends at 250,000 segments, was a serial part of an open). The
 * writer started from the same {@link RecoveredLog} takes it ({@link RecoveredLog#takeWriterTable})
 * instead of seeding its own: the same call on the same input, so the same table.
 *
 * <p><b>Threading:</b> built by one thread and handed to the writer's starting thread through
 * a happens-before edge (the opening joins its helper before the writer starts); from then on
 * the table is the writer's, as one it seeded itself.
 */
public final class PreparedSegmentTable {
    private final LogSegmentTable table;

    private PreparedSegmentTable(final LogSegmentTable table) {
        this.table = table;
    }

    /**
     * @param liveSegments {@link RecoveredLog#liveSegments()}.
     * @param files        {@link RecoveredLog#files()}.
     * @return a table seeded with the recovered live segments and files' data ends, as the
     *         writer's start would seed it.
     */
    public static PreparedSegmentTable seed(final List<RecoveredSegment> liveSegments, final List<RecoveredFile> files) {
        Objects.requireNonNull(liveSegments, "liveSegments");
        Objects.requireNonNull(files, "files");
        final LogSegmentTable table = new LogSegmentTable();
        table.seed(liveSegments, files);
        return new PreparedSegmentTable(table);
    }

    LogSegmentTable table() {
        return table;
    }
}
