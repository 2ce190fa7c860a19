package io.streamcache.log.internal;

import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.HistoricalReadStats;
import io.streamcache.log.LogDirectoryStats;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.StoreLog;
import io.streamcache.log.WriterStats;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * {@link StoreLog} over a store's writer, directory and historical reader: each call goes to
 * the part that answers it. Holds no state of its own; thread-safe as those parts are.
 */
public final class StoreLogView implements StoreLog {
    private final AggregatingWriter writer;
    private final LogDirectory directory;
    private final HistoricalReader reader;

    /**
     * @param writer    the store's writer.
     * @param directory the store's log directory.
     * @param reader    the store's historical reader.
     */
    public StoreLogView(final AggregatingWriter writer, final LogDirectory directory, final HistoricalReader reader) {
        this.writer = Objects.requireNonNull(writer, "writer");
        this.directory = Objects.requireNonNull(directory, "directory");
        this.reader = Objects.requireNonNull(reader, "reader");
    }

    @Override
    public Path directory() {
        return directory.path();
    }

    @Override
    public WriterStats writerStats() {
        return writer.stats();
    }

    @Override
    public LogDirectoryStats directoryStats() {
        return directory.stats();
    }

    @Override
    public HistoricalReadStats historicalReadStats() {
        return reader.stats();
    }

    @Override
    public boolean isFailed() {
        return writer.isFailed();
    }

    @Override
    public LogFailedException lastFailure() {
        return writer.lastFailure();
    }

    @Override
    public long automaticRecoveries() {
        return writer.automaticRecoveries();
    }

    @Override
    public CompletableFuture<Void> recover() {
        return writer.recover();
    }

    @Override
    public CompletableFuture<Void> force() {
        return writer.force();
    }

    @Override
    public void prepareFiles(final int count) throws IOException {
        if (count < 0) {
            throw new IllegalArgumentException("count=" + count + " must be >= 0");
        }
        directory.prepareSpares(count);
    }

    @Override
    public String toString() {
        return "StoreLog[" + directory.path() + "]";
    }
}
