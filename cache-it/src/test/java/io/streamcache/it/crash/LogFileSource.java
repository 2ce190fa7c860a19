package io.streamcache.it.crash;

import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.recovery.RecoveredFile;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * A segment's bytes read straight from the log files, where a {@link RecoveredLog}'s location
 * index says they are (a DATA record's payload follows its header): a check of the files that
 * does not go through the store. Use from one thread; close it.
 */
final class LogFileSource implements CrashSegmentScan.Source, AutoCloseable {
    private final Map<Long, Path> paths = new HashMap<>();
    private final Map<Long, FileChannel> channels = new HashMap<>();
    private long[] offsets = new long[1024];
    private int[] lengths = new int[1024];
    private long[] files = new long[1024];
    private long[] positions = new long[1024];
    private int count;

    LogFileSource(final RecoveredLog log, final RecoveredSegment segment) {
        for (final RecoveredFile file : log.files()) {
            paths.put(file.fileNumber(), file.path());
        }
        segment.locations().forEach((offset, length, fileNumber, position) -> {
            if (count == offsets.length) {
                offsets = Arrays.copyOf(offsets, count * 2);
                lengths = Arrays.copyOf(lengths, count * 2);
                files = Arrays.copyOf(files, count * 2);
                positions = Arrays.copyOf(positions, count * 2);
            }
            offsets[count] = offset;
            lengths[count] = length;
            files[count] = fileNumber;
            positions[count] = position;
            count++;
        });
    }

    /**
     * Calls {@code visitor} for every DATA record of the segment, in offset order.
     */
    void forEachRecord(final LocationIndex.RecordVisitor visitor) {
        for (int i = 0; i < count; i++) {
            visitor.onRecord(offsets[i], lengths[i], files[i], positions[i]);
        }
    }

    @Override
    public int read(final long offset, final byte[] destination, final int maxLength) throws IOException {
        int low = 0;
        int high = count - 1;
        while (low <= high) {
            final int middle = (low + high) >>> 1;
            if (offsets[middle] + lengths[middle] <= offset) {
                low = middle + 1;
            } else if (offsets[middle] > offset) {
                high = middle - 1;
            } else {
                return readRecord(middle, offset, destination, maxLength);
            }
        }
        throw new IllegalStateException("the location index has no record holding offset=" + offset);
    }

    private int readRecord(final int index, final long offset, final byte[] destination, final int maxLength) throws IOException {
        final int from = (int) (offset - offsets[index]);
        final int n = Math.min(maxLength, lengths[index] - from);
        final ByteBuffer buffer = ByteBuffer.wrap(destination, 0, n);
        final FileChannel channel = channel(files[index]);
        final long position = positions[index] + LogRecordDescriptor.HEADER_LENGTH + from;
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                throw new IllegalStateException("file=" + paths.get(files[index]) + " ends before position="
                    + (position + buffer.position()));
            }
        }
        return n;
    }

    private FileChannel channel(final long fileNumber) throws IOException {
        FileChannel channel = channels.get(fileNumber);
        if (channel == null) {
            final Path path = paths.get(fileNumber);
            if (path == null) {
                throw new IllegalStateException("no recovered file number=" + fileNumber);
            }
            channel = FileChannel.open(path, StandardOpenOption.READ);
            channels.put(fileNumber, channel);
        }
        return channel;
    }

    @Override
    public void close() throws IOException {
        for (final FileChannel channel : channels.values()) {
            channel.close();
        }
        channels.clear();
    }
}
