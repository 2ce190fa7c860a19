package io.streamcache.it.arch.cycle.a;

import io.streamcache.it.arch.cycle.b.Down;

/** Half of a package cycle that {@code ArchitectureTest} must see; not used otherwise. */
public final class Up {
    private Up() {
    }

    /** @return the other half. */
    public static Class<?> other() {
        return Down.class;
    }
}
