package io.streamcache.log.testing;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;

/**
 * Closes what a test opened, last opened first, after each test: the caches, stores and readers
 * the log tests build (register with {@code @RegisterExtension final Closer closer = new Closer();}).
 * One test thread at a time.
 */
public final class Closer implements AfterEachCallback {
    private final List<AutoCloseable> closing = new ArrayList<>();

    /**
     * @return {@code closeable}, to be closed after the test.
     */
    public <T extends AutoCloseable> T add(final T closeable) {
        closing.add(closeable);
        return closeable;
    }

    @Override
    public void afterEach(final ExtensionContext context) throws Exception {
        Exception first = null;
        for (int i = closing.size() - 1; i >= 0; i--) {
            try {
                closing.get(i).close();
            } catch (final Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        closing.clear();
        if (first != null) {
            throw first;
        }
    }
}
