package io.streamcache.segmentstore;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A table's live segments found by a key the segment itself holds (its name: {@link ByName}, or
 * its id: {@link ById}): an open-addressing hash table of the segments themselves, with no map
 * node and no boxed key per segment. One reference per slot, at most 3/4 of the slots used
 * (live and removed); a rebuild makes twice as many slots as segments (any number of slots, not
 * only powers of two: a slot is picked by multiplying the hash, not by masking it), so a map
 * grows by half again from 3/4 full to 1/2 full: 5.3 to 8 bytes per segment, where a
 * {@code ConcurrentHashMap} took a 32-byte node, a table slot and, by id, a 16-byte
 * {@code Integer} (issue 14: heap per segment at hundreds of thousands of them).
 *
 * <p>Linear probing; a removed segment leaves a tombstone ({@link #REMOVED}) so that probe
 * chains stay whole; tombstones go at the next rebuild, which copies the live segments into a
 * new array and publishes it.
 *
 * <p><b>Threading:</b> thread-safe. Lookups ({@code get}, {@link #forEach}, {@link #size}) take
 * no lock and allocate nothing: they read the current array (a volatile field) and its slots
 * with acquire semantics. Changes ({@code put}, {@code remove}, {@link #clear}) are serialized
 * by the map's monitor: they are the control path (create, delete, recovery), never an append
 * or a read; each writes one slot with release semantics, or builds a new array and publishes it,
 * after which the old one is never written again. So a lookup sees every segment put before it
 * began and not removed before it began, and a segment put or removed meanwhile or not, as a
 * {@code ConcurrentHashMap} lookup does; a segment it finds is fully constructed (published by
 * the release write). Iteration ({@link #forEach}) is weakly consistent, as a
 * {@code ConcurrentHashMap}'s is.
 */
abstract class SegmentMap {
    /** A removed segment's slot: skipped by lookups, reused by puts, dropped by rebuilds. */
    private static final Object REMOVED = new Object();
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Object[].class);
    static final int MIN_CAPACITY = 16;
    /** The most slots: an array's size limit, below {@code Integer.MAX_VALUE}. */
    static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

    /** The slots: null (never used since the last rebuild), {@link #REMOVED} or a segment. */
    private volatile Object[] slots = new Object[MIN_CAPACITY];
    /** Segments in {@link #slots}. */
    private volatile int size;
    /** Slots not null (segments and tombstones); guarded by this. */
    private int used;

    /** The key's hash of {@code segment}. */
    abstract int hashOf(Segment segment);

    /** Whether {@code a} and {@code b} have the same key. */
    abstract boolean sameKey(Segment a, Segment b);

    /**
     * The first slot of {@code hash}'s probe in {@code capacity} slots (any capacity, not only
     * powers of two): the hash, mixed, then multiplied by a factor that depends on the capacity
     * ({@code capacity | 1}, odd), scaled to the capacity by its high bits.
     *
     * <p>Why the factor: the slot is taken from the mixed hash's high bits, so the slots of one
     * array are in the order of the mixed hashes. A map emptied in slot order (a close deletes
     * every segment in {@link #forEach} order) keeps only the segments of the highest mixed hashes
     * when it shrinks; with the same mixing in the smaller array they would all start in its last
     * part, wrap around and form one cluster: measured at 250,000 segments, 1,566 probes per
     * removal and 700 million in the rebuilds (a close took seconds). Multiplied by another odd
     * factor, a range of mixed hashes spreads over the whole 32 bits, so a rebuild to another
     * capacity places them independently of the order they had.
     *
     * <p>Why this mix: every lookup by name ({@code SegmentStore.read}, {@code append}) computes it
     * before it can load the slot, so it is a chain of dependent instructions on the data path. The
     * hash's own mix (one multiply, one shift) does not depend on the capacity and runs while the
     * array and its length are loaded; the capacity adds one multiply. A full 32-bit finalizer
     * seeded by the capacity (two multiplies, three shifts and the seed's multiply, in one chain)
     * made {@code SegmentStoreBenchmark.copyRead} 3 ns (15%) slower; this one costs under 1 ns and
     * spreads as well (docs/benchmarks.md, "cache-core hot path: a regression").
     */
    static int start(final int hash, final int capacity) {
        final int h = hash * 0x9E3779B9;
        final long spread = ((h ^ (h >>> 16)) & 0xFFFFFFFFL) * (capacity | 1) & 0xFFFFFFFFL;
        return (int) (spread * capacity >>> 32);
    }

    /** The slot after {@code i} in a probe. */
    static int next(final int i, final int capacity) {
        return i + 1 == capacity ? 0 : i + 1;
    }

    /** The current slots, for a lookup: read once. */
    final Object[] slots() {
        return slots;
    }

    /** A slot's content, with acquire semantics (a segment found is fully constructed). */
    static Object slot(final Object[] slots, final int index) {
        return SLOT.getAcquire(slots, index);
    }

    /**
     * For a walk that allocates nothing: the segment in slot {@code index} of {@code slots} (an
     * array {@link #slots()} returned), or null. Weakly consistent, as {@link #forEach}.
     */
    static Segment segmentAt(final Object[] slots, final int index) {
        final Object o = slot(slots, index);
        return isSegment(o) ? (Segment) o : null;
    }

    static boolean isSegment(final Object slot) {
        return slot != null && slot != REMOVED;
    }

    /** @return the number of segments now. */
    final int size() {
        return size;
    }

    /**
     * Puts {@code segment} unless a segment with its key is in the map.
     *
     * @return the segment already there (nothing changed), or null (put).
     */
    final synchronized Segment putIfAbsent(final Segment segment) {
        return put(segment, false);
    }

    /**
     * Puts {@code segment}, replacing a segment with its key if there is one.
     *
     * @return the segment replaced, or null.
     */
    final synchronized Segment put(final Segment segment) {
        return put(segment, true);
    }

    private Segment put(final Segment segment, final boolean replace) {
        Object[] a = slots;
        int free = -1;
        for (int i = start(hashOf(segment), a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
            final Object o = a[i];
            if (o == null) {
                if (free < 0) {
                    free = i;
                }
                break;
            }
            if (o == REMOVED) {
                if (free < 0) {
                    free = i;
                }
                continue;
            }
            final Segment present = (Segment) o;
            if (sameKey(present, segment)) {
                if (replace) {
                    SLOT.setRelease(a, i, segment);
                }
                return present;
            }
        }
        if (free >= 0 && a[free] == REMOVED) {
            SLOT.setRelease(a, free, segment);
            size = size + 1;
            return null;
        }
        if (used + 1 > a.length - (a.length >>> 2)) {
            a = rebuild(size + 1);
            free = start(hashOf(segment), a.length);
            while (a[free] != null) {
                free = next(free, a.length);
            }
        }
        SLOT.setRelease(a, free, segment);
        used++;
        size = size + 1;
        return null;
    }

    /**
     * Removes {@code segment} itself (not another segment with its key).
     *
     * @return whether it was in the map.
     */
    final synchronized boolean remove(final Segment segment) {
        final Object[] a = slots;
        for (int i = start(hashOf(segment), a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
            final Object o = a[i];
            if (o == null) {
                return false;
            }
            if (o == segment) {
                removeAt(a, i);
                return true;
            }
        }
        return false;
    }

    /** Empties the slot {@code i} of the current array {@code a}; shrinks the map if it is mostly empty. Holds the monitor. */
    final void removeAt(final Object[] a, final int i) {
        SLOT.setRelease(a, i, REMOVED);
        size = size - 1;
        if (a.length > MIN_CAPACITY && size < a.length >>> 3) {
            rebuild(size);
        }
    }

    /**
     * Makes room for {@code count} segments in all without a rebuild while they are put (a
     * recovery restoring 250,000 segments rebuilt the array 15 times, each touching every
     * segment and its key); does nothing if there is room already.
     */
    final synchronized void ensureCapacity(final int count) {
        final long needed = (long) count + (used - size);
        if (needed > slots.length - (slots.length >>> 2)) {
            rebuild(count);
        }
    }

    /** Removes every segment. */
    final synchronized void clear() {
        slots = new Object[MIN_CAPACITY];
        used = 0;
        size = 0;
    }

    /**
     * Copies the segments into a new array of twice {@code live} slots (at least
     * {@link #MIN_CAPACITY}), and publishes it. Holds the monitor.
     */
    private Object[] rebuild(final int live) {
        final int capacity = (int) Math.max(MIN_CAPACITY, Math.min(MAX_CAPACITY, 2L * live));
        final Object[] old = slots;
        final Object[] a = new Object[capacity];
        int count = 0;
        for (final Object o : old) {
            if (isSegment(o)) {
                int i = start(hashOf((Segment) o), capacity);
                while (a[i] != null) {
                    i = next(i, capacity);
                }
                a[i] = o;
                count++;
            }
        }
        used = count;
        slots = a;
        return a;
    }

    /** Calls {@code action} with each segment in the map (weakly consistent: see the class comment). */
    final void forEach(final Consumer<? super Segment> action) {
        final Object[] a = slots;
        for (int i = 0; i < a.length; i++) {
            final Object o = slot(a, i);
            if (isSegment(o)) {
                action.accept((Segment) o);
            }
        }
    }

    /** @return the segments now: a snapshot (weakly consistent). */
    final List<Segment> values() {
        final List<Segment> values = new ArrayList<>(size);
        forEach(values::add);
        return values;
    }

    /** The segments by name. */
    static final class ByName extends SegmentMap {
        @Override
        int hashOf(final Segment segment) {
            return segment.name.hashCode();
        }

        @Override
        boolean sameKey(final Segment a, final Segment b) {
            return a.name.equals(b.name);
        }

        /** @return the segment named {@code name}, or null: lock-free, allocates nothing. */
        Segment get(final String name) {
            final Object[] a = slots();
            for (int i = start(name.hashCode(), a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
                final Object o = slot(a, i);
                if (o == null) {
                    return null;
                }
                if (isSegment(o) && ((Segment) o).name.equals(name)) {
                    return (Segment) o;
                }
            }
            return null;
        }

        boolean containsKey(final String name) {
            return get(name) != null;
        }

        /**
         * Removes {@code segment} if it is the segment named {@code name} (as
         * {@code ConcurrentHashMap.remove(key, value)}).
         *
         * @return whether it was removed.
         */
        boolean remove(final String name, final Segment segment) {
            return segment.name.equals(name) && remove(segment);
        }

        /**
         * Removes the segment named {@code name}, if any.
         *
         * @return it, or null.
         */
        synchronized Segment remove(final String name) {
            final Segment segment = get(name);
            return segment != null && remove(segment) ? segment : null;
        }

        /** @return the names now: a snapshot (weakly consistent). */
        List<String> names() {
            final List<String> names = new ArrayList<>(size());
            forEach(segment -> names.add(segment.name));
            return names;
        }
    }

    /** The segments by id. */
    static final class ById extends SegmentMap {
        @Override
        int hashOf(final Segment segment) {
            return segment.id;
        }

        @Override
        boolean sameKey(final Segment a, final Segment b) {
            return a.id == b.id;
        }

        /** @return the segment whose id is {@code id}, or null: lock-free, allocates nothing. */
        Segment get(final int id) {
            final Object[] a = slots();
            for (int i = start(id, a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
                final Object o = slot(a, i);
                if (o == null) {
                    return null;
                }
                if (isSegment(o) && ((Segment) o).id == id) {
                    return (Segment) o;
                }
            }
            return null;
        }

        /**
         * Removes the segment whose id is {@code id}, if any.
         *
         * @return it, or null.
         */
        synchronized Segment remove(final int id) {
            final Object[] a = slots();
            for (int i = start(id, a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
                final Object o = a[i];
                if (o == null) {
                    return null;
                }
                if (isSegment(o) && ((Segment) o).id == id) {
                    removeAt(a, i);
                    return (Segment) o;
                }
            }
            return null;
        }
    }
}
