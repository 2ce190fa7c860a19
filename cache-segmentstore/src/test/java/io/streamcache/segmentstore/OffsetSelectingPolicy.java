package io.streamcache.segmentstore;

import io.streamcache.segmentstore.eviction.EvictionPolicy;
import io.streamcache.segmentstore.eviction.CachedEntry;

import java.util.HashSet;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * A test policy that evicts exactly the evictable entries a predicate selects, in one step;
 * confined to the manager's pass like every policy.
 */
public final class OffsetSelectingPolicy implements EvictionPolicy {
    private volatile BiPredicate<String, CachedEntry> predicate = (segment, entry) -> false;
    private boolean stepped;

    /**
     * @param predicate chooses, by segment name and entry, what the next passes evict.
     */
    public void select(final BiPredicate<String, CachedEntry> predicate) {
        this.predicate = predicate;
    }

    /**
     * Makes the next passes evict the entries of {@code segment} at these offsets.
     */
    public void selectOffsets(final String segment, final long... offsets) {
        final Set<Long> set = new HashSet<>();
        for (final long offset : offsets) {
            set.add(offset);
        }
        select((name, entry) -> name.equals(segment) && set.contains(entry.offset()));
    }

    @Override
    public void beginPass(final int currentGeneration) {
        stepped = false;
    }

    @Override
    public void survey(final String segment, final CachedEntry entry) {
        // The predicate decides alone.
    }

    @Override
    public boolean advance() {
        if (stepped) {
            return false;
        }
        stepped = true;
        return true;
    }

    @Override
    public boolean select(final String segment, final CachedEntry entry) {
        return predicate.test(segment, entry);
    }
}
