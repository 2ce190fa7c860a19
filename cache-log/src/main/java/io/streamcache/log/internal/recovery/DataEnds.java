package io.streamcache.log.internal.recovery;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * One recovered file's {@link RecoveredFile#dataEnds()}: segment id to the end offset of its last
 * DATA record in the file, in two primitive arrays instead of a map of boxed keys and values
 * (at 250,000 segments a log of 73 files held 1.2 million entries, built at every open). An
 * immutable {@link Map} view; {@link #get} is a linear search (the writer only iterates, with
 * {@link #forEachEnd}). Thread-safe once built.
 */
final class DataEnds extends AbstractMap<Integer, Long> {
    /** Receives the entries without boxing. */
    @FunctionalInterface
    interface Visitor {
        void accept(int segmentId, long end);
    }

    private final int[] ids;
    private final long[] ends;

    /**
     * @param ids  distinct segment ids (the arrays are taken, not copied).
     * @param ends their ends, in step.
     */
    DataEnds(final int[] ids, final long[] ends) {
        if (ids.length != ends.length) {
            throw new IllegalArgumentException("ids=" + ids.length + " ends=" + ends.length);
        }
        this.ids = ids;
        this.ends = ends;
    }

    void forEachEnd(final Visitor visitor) {
        for (int i = 0; i < ids.length; i++) {
            visitor.accept(ids[i], ends[i]);
        }
    }

    @Override
    public int size() {
        return ids.length;
    }

    @Override
    public Long get(final Object key) {
        if (key instanceof Integer id) {
            for (int i = 0; i < ids.length; i++) {
                if (ids[i] == id) {
                    return ends[i];
                }
            }
        }
        return null;
    }

    @Override
    public boolean containsKey(final Object key) {
        return get(key) != null;
    }

    @Override
    public void forEach(final BiConsumer<? super Integer, ? super Long> action) {
        for (int i = 0; i < ids.length; i++) {
            action.accept(ids[i], ends[i]);
        }
    }

    @Override
    public Set<Entry<Integer, Long>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return ids.length;
            }

            @Override
            public Iterator<Entry<Integer, Long>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < ids.length;
                    }

                    @Override
                    public Entry<Integer, Long> next() {
                        if (next >= ids.length) {
                            throw new NoSuchElementException();
                        }
                        final int i = next++;
                        return new SimpleImmutableEntry<>(ids[i], ends[i]);
                    }
                };
            }
        };
    }
}
