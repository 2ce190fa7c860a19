package io.streamcache.segmentstore;

/**
 * {@link DiskErrorTest} with 4 forces in flight: the writer thread writes the next batches while
 * forcing threads force the ones before.
 */
class ForcesInFlightDiskErrorTest extends DiskErrorTest {
    @Override
    int forcesInFlight() {
        return 4;
    }
}
