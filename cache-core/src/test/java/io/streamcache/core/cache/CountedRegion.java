package io.streamcache.core.cache;

import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.OnDemandRegion;

import java.nio.ByteBuffer;

/**
 * For tests: a region that runs an action when it is closed and otherwise is the region it
 * wraps, an on-demand one included (so the cache still allocates its buffers as it needs them).
 */
final class CountedRegion {
    private CountedRegion() {
    }

    static MemoryRegion wrap(final MemoryRegion region, final Runnable onClose) {
        if (region instanceof OnDemandRegion onDemand) {
            return new OnDemand(onDemand, onClose);
        }
        return new Plain(region, onClose);
    }

    private static class Plain implements MemoryRegion {
        final MemoryRegion region;
        private final Runnable onClose;

        Plain(final MemoryRegion region, final Runnable onClose) {
            this.region = region;
            this.onClose = onClose;
        }

        @Override
        public int bufferCount() {
            return region.bufferCount();
        }

        @Override
        public int bufferLength() {
            return region.bufferLength();
        }

        @Override
        public ByteBuffer buffer(final int index) {
            return region.buffer(index);
        }

        @Override
        public boolean reopened() {
            return region.reopened();
        }

        @Override
        public String description() {
            return region.description();
        }

        @Override
        public void close() {
            onClose.run();
            region.close();
        }
    }

    private static final class OnDemand extends Plain implements OnDemandRegion {
        OnDemand(final OnDemandRegion region, final Runnable onClose) {
            super(region, onClose);
        }

        @Override
        public int allocate() {
            return ((OnDemandRegion)region).allocate();
        }

        @Override
        public int allocatedCount() {
            return ((OnDemandRegion)region).allocatedCount();
        }
    }
}
