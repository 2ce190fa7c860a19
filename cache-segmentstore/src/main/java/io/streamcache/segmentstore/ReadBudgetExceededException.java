package io.streamcache.segmentstore;

import io.streamcache.core.StreamcacheException;

/**
 * An immutable exception: a read was refused at once because a fail-fast {@link ReadBudget} it goes through is spent: its
 * unreleased results hold its limit. Nothing was read; retry once results are released (a broker
 * stops reading a channel's requests until its writes drain). Immutable, like every exception.
 */
public final class ReadBudgetExceededException extends StreamcacheException {
    private static final long serialVersionUID = 1L;

    private final String budget;
    private final long limit;
    private final long used;

    public ReadBudgetExceededException(final String budget, final long limit, final long used) {
        super("read budget=" + budget + " is spent: used=" + used + " of limit=" + limit + "; release results to read on");
        this.budget = budget;
        this.limit = limit;
        this.used = used;
    }

    /** @return the name of the budget that was spent. */
    public String budget() {
        return budget;
    }

    public long limit() {
        return limit;
    }

    /** @return the bytes charged to it when the read was refused. */
    public long used() {
        return used;
    }
}
