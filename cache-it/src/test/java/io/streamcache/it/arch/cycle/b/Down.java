package io.streamcache.it.arch.cycle.b;

import io.streamcache.it.arch.cycle.a.Up;

/** The other half of the package cycle that {@code ArchitectureTest} must see. */
public final class Down {
    private Down() {
    }

    /** @return the first half. */
    public static Class<?> other() {
        return Up.class;
    }
}
