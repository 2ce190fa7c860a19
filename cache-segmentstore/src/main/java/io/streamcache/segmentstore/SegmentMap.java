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
 * {@code Integer} (heap per segment at hundreds of thousands of them).
 *
 * <p>Linear probing; a removed segment leaves a tombstone ({@link #REMOVED}) so that probe
 * chains stay whole; tombstones go at the next rebuild, which copies the live segments into a
 * new array and publishes it.
 *
 * <pre>
 *  slots (volatile): [ null | seg A | REMOVED | seg B | seg C | null | ... ]   a lookup: from start(hash),
 *                              ^ start(hash of B): A, REMOVED skipped, B     until its key or a null
 *  a slot's life in one array:
 *     null --CAS by putIfAbsent (no lock)--&gt; segment --remove (monitor)--&gt; REMOVED
 *     null --rebuild's freeze (monitor)--&gt; FROZEN     the array is being replaced: puts wait for
 *                                                    the monitor and go to the new array
 *  table (volatile): the current slots and the count of their slots not null (puts reserve one
 *                    before they take a null slot; 3/4 of the slots at most, else a rebuild)
 * </pre>
 *
 * <p><b>Threading:</b> thread-safe. Lookups ({@code get}, {@link #forEach}, {@link #size}) take
 * no lock and allocate nothing: they read the current array (a volatile field) and its slots
 * with acquire semantics. {@link #putIfAbsent} takes no lock either (40 producers
 * creating 250,000 queues queued on the map's monitor): it reserves room in the current array
 * (a CAS on its count), then takes the first null slot of its key's probe with a CAS, so two
 * puts of one key meet in the same chain and the second finds the first's segment; it never
 * reuses a tombstone (a put of the same key further along the chain could not see it). The other
 * changes ({@link #put} that replaces, {@code remove}, {@link #clear}, {@link #ensureCapacity})
 * and every rebuild are serialized by the map's monitor: they are the control path (delete,
 * recovery), never an append or a read. A rebuild first freezes the old array (every null slot
 * becomes {@link #FROZEN} by a CAS, so a racing put either got its slot first and is copied, or
 * fails and waits for the monitor), then copies the segments into the new array and publishes it
 * (slots first, then the table puts read), after which the old array is never written again. A
 * lookup that meets {@link #FROZEN} stops as at a null: nothing it must see is past it (a put that
 * completed before the lookup began is in the array the lookup read, or in a newer one that the
 * lookup's volatile read of the slots would have returned). So a lookup sees every segment put
 * before it began and not removed before it began, and a segment put or removed meanwhile or not,
 * as a {@code ConcurrentHashMap} lookup does; a segment it finds is fully constructed (published
 * by the CAS or the array's publication). Iteration ({@link #forEach}) is weakly consistent, as a
 * {@code ConcurrentHashMap}'s is.
 */
abstract class SegmentMap {
    /** A removed segment's slot: skipped by lookups, dropped by rebuilds. */
    private static final Object REMOVED = new Object();
    /** A slot null when a rebuild began: taken by no put; ends a lookup's probe as a null does. */
    private static final Object FROZEN = new Object();
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Object[].class);
    private static final VarHandle SIZE;
    private static final VarHandle USED;
    static final int MIN_CAPACITY = 16;
    /** The most slots: an array's size limit, below {@code Integer.MAX_VALUE}. */
    static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

    static {
        try {
            SIZE = MethodHandles.lookup().findVarHandle(Table.class, "size", int.class);
            USED = MethodHandles.lookup().findVarHandle(Table.class, "used", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The slots: null (never used since the last rebuild), {@link #REMOVED}, {@link #FROZEN} or a segment; read by lookups. */
    private volatile Object[] slots;
    /** The same slots with their count, for puts; published after {@link #slots}. */
    private volatile Table table;

    /** An array of slots and how many of them are not null (segments and tombstones) or reserved by a put. */
    private static final class Table {
        final Object[] slots;
        /** At most this many slots not null. */
        final int limit;
        /** Slots not null, plus those reserved by puts in progress; changed atomically ({@link #USED}). */
        volatile int used;
        /**
         * Segments in {@link #slots}; changed atomically ({@link #SIZE}). Beside {@link #used}, so
         * that a put's two counts are one contended cache line, not two. A rebuild's new table
         * starts from the segments it copied.
         */
        volatile int size;

        Table(final Object[] slots, final int used) {
            this.slots = slots;
            this.size = used;
            this.limit = slots.length - (slots.length >>> 2);
            this.used = used;
        }

        /** Reserves a null slot for a put: false if the array is as full as it may be. */
        boolean reserve() {
            int u;
            do {
                u = used;
                if (u >= limit) {
                    return false;
                }
            } while (!USED.weakCompareAndSet(this, u, u + 1));
            return true;
        }

        /** Gives back a reservation the put did not use. */
        void release() {
            USED.getAndAdd(this, -1);
        }
    }

    SegmentMap() {
        publish(new Table(new Object[MIN_CAPACITY], 0));
    }

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
     * spreads as well (docs/benchmarks.md, "Block cache against memcpy, a HashMap and its peers").
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
        return slot instanceof Segment;
    }

    /** @return the number of segments now. */
    final int size() {
        return table.size;
    }

    /**
     * Puts {@code segment} unless a segment with its key is in the map. Takes no lock unless the
     * array must be rebuilt (see the class comment).
     *
     * @return the segment already there (nothing changed), or null (put).
     */
    final Segment putIfAbsent(final Segment segment) {
        final int hash = hashOf(segment);
        while (true) {
            final Table t = table;
            if (!t.reserve()) {
                makeRoom(t, false);
                continue;
            }
            final Object[] a = t.slots;
            boolean exhausted = true;
            for (int i = start(hash, a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
                Object o = slot(a, i);
                if (o == null) {
                    if (SLOT.compareAndSet(a, i, null, segment)) {
                        SIZE.getAndAdd(t, 1);
                        return null;
                    }
                    // Another put took it (or a rebuild froze it): what is there now decides.
                    o = slot(a, i);
                }
                if (o instanceof Segment present) {
                    if (sameKey(present, segment)) {
                        t.release();
                        return present;
                    }
                } else if (o == FROZEN) {
                    exhausted = false;
                    break;
                }
            }
            t.release();
            // A rebuild froze the array (wait for it, then go to the new one), or no null slot
            // was left in the probe (cannot be while puts reserve; rebuild then).
            makeRoom(t, exhausted);
        }
    }

    /**
     * Under the monitor: rebuilds the array of {@code t} if it is still the current one and full
     * (or {@code force}); else returns at once (the rebuild that replaced it held the monitor
     * until it published the new array).
     */
    private synchronized void makeRoom(final Table t, final boolean force) {
        if (table == t && (force || t.used >= t.limit)) {
            rebuild(t.size + 1);
        }
    }

    /**
     * Puts {@code segment}, replacing a segment with its key if there is one. Serialized with
     * removals and rebuilds by the monitor (a put that does not replace is {@link #putIfAbsent}).
     *
     * @return the segment replaced, or null.
     */
    final synchronized Segment put(final Segment segment) {
        final Segment present = putIfAbsent(segment);
        if (present == null) {
            return null;
        }
        // Under the monitor a segment's slot changes only here and in remove: no put takes it.
        final Object[] a = slots;
        for (int i = start(hashOf(segment), a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
            if (a[i] == present) {
                SLOT.setRelease(a, i, segment);
                return present;
            }
        }
        throw new IllegalStateException("segment " + present + " found and then not in its probe");
    }

    /**
     * Removes {@code segment} itself (not another segment with its key).
     *
     * @return whether it was in the map.
     */
    final synchronized boolean remove(final Segment segment) {
        final Object[] a = slots;
        for (int i = start(hashOf(segment), a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
            final Object o = slot(a, i);
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
        final int left = (int) SIZE.getAndAdd(table, -1) - 1;
        if (a.length > MIN_CAPACITY && left < a.length >>> 3) {
            rebuild(left);
        }
    }

    /**
     * Makes room for {@code count} segments in all without a rebuild while they are put (a
     * recovery restoring 250,000 segments rebuilt the array 15 times, each touching every
     * segment and its key); does nothing if there is room already.
     */
    final synchronized void ensureCapacity(final int count) {
        final Table t = table;
        final long needed = (long) count + (t.used - t.size);
        if (needed > t.limit) {
            rebuild(count);
        }
    }

    /** Removes every segment. */
    final synchronized void clear() {
        freeze(slots);
        publish(new Table(new Object[MIN_CAPACITY], 0));
    }

    /**
     * Copies the segments into a new array of twice {@code live} slots or twice as many as there
     * are (at least {@link #MIN_CAPACITY}), and publishes it. Holds the monitor.
     */
    private void rebuild(final int live) {
        final Object[] old = slots;
        final int count = freeze(old);
        final int capacity = (int) Math.max(MIN_CAPACITY, Math.min(MAX_CAPACITY, 2L * Math.max(live, count)));
        final Object[] a = new Object[capacity];
        for (final Object o : old) {
            if (o instanceof Segment segment) {
                int i = start(hashOf(segment), capacity);
                while (a[i] != null) {
                    i = next(i, capacity);
                }
                a[i] = o;
            }
        }
        publish(new Table(a, count));
    }

    /**
     * Turns every null slot of {@code a} into {@link #FROZEN}, so that no put takes a slot of it
     * any more (a put that took one first is kept: the CAS fails here and its segment is read).
     * Holds the monitor, so no segment's slot changes meanwhile.
     *
     * @return the segments in {@code a}, all of which stay.
     */
    private static int freeze(final Object[] a) {
        int count = 0;
        for (int i = 0; i < a.length; i++) {
            Object o = slot(a, i);
            if (o == null && !SLOT.compareAndSet(a, i, null, FROZEN)) {
                o = slot(a, i);
            }
            if (o instanceof Segment) {
                count++;
            }
        }
        return count;
    }

    /** Publishes a new array: to lookups first, then to puts (a put that completed in it is then seen by every later lookup). */
    private void publish(final Table t) {
        slots = t.slots;
        table = t;
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
        final List<Segment> values = new ArrayList<>(size());
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
            // The strings' cached hashes first: a put's probe passes other keys without loading their bytes.
            return a.name.hashCode() == b.name.hashCode() && a.name.equals(b.name);
        }

        /** @return the segment named {@code name}, or null: lock-free, allocates nothing. */
        Segment get(final String name) {
            final Object[] a = slots();
            for (int i = start(name.hashCode(), a.length), n = 0; n < a.length; i = next(i, a.length), n++) {
                final Object o = slot(a, i);
                if (o instanceof Segment segment) {
                    if (segment.name.equals(name)) {
                        return segment;
                    }
                } else if (o != REMOVED) {
                    // null, or FROZEN: the end of the probe (see the class comment).
                    return null;
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
                if (o instanceof Segment segment) {
                    if (segment.id == id) {
                        return segment;
                    }
                } else if (o != REMOVED) {
                    // null, or FROZEN: the end of the probe (see the class comment).
                    return null;
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
                final Object o = slot(a, i);
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
