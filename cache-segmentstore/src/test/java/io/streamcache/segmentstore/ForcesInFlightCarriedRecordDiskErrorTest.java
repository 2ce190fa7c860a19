package io.streamcache.segmentstore;

/**
 * {@link CarriedRecordDiskErrorTest} with 4 forces in flight: the writer thread writes the next batches while
 * forcing threads force the ones before.
 */
class ForcesInFlightCarriedRecordDiskErrorTest extends CarriedRecordDiskErrorTest {
    @Override
    int forcesInFlight() {
        return 4;
    }
}
