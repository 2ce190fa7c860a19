package io.streamcache.log.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The identity of an open log file: its path and the {@link BasicFileAttributes#fileKey()} (device
 * and inode on Linux) the path named when the file was opened; immutable, so any thread may
 * {@link #check()} it (the writer thread after its own forces, each forcing thread of the
 * {@link ForceStage} after its force). A file system without file keys gives no identity and is
 * not checked.
 */
record FileIdentity(Path path, Object key) {
    /** @return the identity of the file {@code path} names now. */
    static FileIdentity of(final Path path) throws IOException {
        return new FileIdentity(path, Files.readAttributes(path, BasicFileAttributes.class).fileKey());
    }

    /**
     * Checks that {@link #path()} still names the file opened: one {@code stat}, made after a
     * force, so that a force that covered appends into a file unlinked (or replaced) before it
     * returned fails them. Without it, a file unlinked under the writer took acknowledged
     * appends that the next open could not find.
     *
     * @throws LogFileGoneException if the file was deleted or replaced.
     */
    void check() throws IOException {
        if (key == null) {
            return;
        }
        final Object now;
        try {
            now = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        } catch (final NoSuchFileException e) {
            throw new LogFileGoneException(path, "was deleted");
        }
        if (now != null && !now.equals(key)) {
            throw new LogFileGoneException(path, "was replaced by another file");
        }
    }
}
