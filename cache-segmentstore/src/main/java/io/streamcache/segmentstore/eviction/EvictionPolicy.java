package io.streamcache.segmentstore.eviction;


/**
 * Chooses which read-index entries a {@link CacheManager} evicts: {@link #recordUse} is called
 * on data-path threads, each under the lock of the entry's segment; every other method is called
 * by one thread at a time, under the manager's pass lock, so a policy needs no locking of its own
 * beyond what {@code recordUse} shares with the pass.
 *
 * <h2>A pass</h2>
 * When the cache is over its target utilization (or full), the manager runs a pass:
 * <ol>
 *   <li>{@link #beginPass(int)} with the current generation;</li>
 *   <li>a <em>survey</em>: {@link #survey} with every entry that may be evicted now (cached,
 *       durable, unpinned, not being appended to), segment by segment;</li>
 *   <li>then, while the pass still has blocks to free, {@link #advance()} moves the cut-off one
 *       step (from the cheapest entries to lose toward the dearest) and the manager offers every
 *       evictable entry to {@link #select}, evicting those it accepts, until enough is freed or
 *       {@code advance} says no step is left.</li>
 * </ol>
 * Between the survey and the selection, appends and reads go on: entries may be used again,
 * become pinned or be removed, so {@code select} must decide on the entry as it is then (the
 * manager offers only entries that are still evictable).
 *
 * <p>The default is {@link GenerationPolicy}; the tiering work adds reader-aware and Hitmap
 * (Catalyst) policies behind this interface.
 */
public interface EvictionPolicy {
    /**
     * Records a use of an entry: an append into it or a read of it. Called on the data path
     * under the segment's lock: must not block, log or allocate. The default stamps the
     * generation into the entry.
     *
     * @param segment    name of the entry's segment.
     * @param entry      the entry used.
     * @param generation the manager's current generation.
     */
    default void recordUse(final String segment, final CachedEntry entry, final int generation) {
        entry.generation(generation);
    }

    /**
     * Starts a pass; forgets whatever the previous pass surveyed.
     *
     * @param currentGeneration the manager's generation now (already advanced for this pass).
     */
    void beginPass(int currentGeneration);

    /**
     * Starts a pass that needs about {@code wantedBytes} freed: a policy that can rank what it
     * surveyed by bytes may put its first cut-off where that much lies behind it, so that the
     * manager scans the sources once instead of once per step. The default ignores the amount.
     *
     * @param currentGeneration the manager's generation now (already advanced for this pass).
     * @param wantedBytes       bytes the pass wants freed, &gt; 0.
     */
    default void beginPass(final int currentGeneration, final long wantedBytes) {
        beginPass(currentGeneration);
    }

    /**
     * Offers an evictable entry to the survey; the policy must not change it.
     *
     * @param segment name of the entry's segment.
     * @param entry   an entry that could be evicted now.
     */
    void survey(String segment, CachedEntry entry);

    /**
     * Moves the cut-off one step toward entries that are dearer to lose.
     *
     * @return {@code false} if no step is left: the pass ends with what it freed.
     */
    boolean advance();

    /**
     * @param segment name of the entry's segment.
     * @param entry   an entry that could be evicted now.
     * @return whether the entry lies behind the current cut-off and should be evicted.
     */
    boolean select(String segment, CachedEntry entry);
}
