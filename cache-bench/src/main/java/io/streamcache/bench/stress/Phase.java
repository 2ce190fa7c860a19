package io.streamcache.bench.stress;

/**
 * The phases of a run with a disturbance ({@code --scenario}): before it starts, while it runs,
 * and after it stopped. Each second of the run belongs to one phase; immutable.
 */
enum Phase {
    BEFORE("before"),
    DURING("during"),
    AFTER("after");

    private final String label;

    Phase(final String label) {
        this.label = label;
    }

    String label() {
        return label;
    }
}
