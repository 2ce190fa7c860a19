package io.streamcache.core.memory;

import java.nio.file.Path;

/**
 * Run by {@link PmemRegionTest} in a child JVM whose dynamic linker cannot use libpmemobj: opens
 * a PMEM region at {@code args[0]} twice (llpl's first failure to load its native library is an
 * {@link UnsatisfiedLinkError}, later ones a {@link NoClassDefFoundError}) and prints, per
 * attempt, a line {@code attempt<TAB>exception class<TAB>message}, or {@code attempt<TAB>opened}.
 */
public final class PmemRegionNativeProbe {
    private PmemRegionNativeProbe() {
    }

    public static void main(final String[] args) {
        final Path path = Path.of(args[0]);
        for (int attempt = 1; attempt <= 2; attempt++) {
            try (MemoryRegion region = PmemRegion.factory(path).open(2, 64 * 1024)) {
                System.out.println(attempt + "\topened " + region.description());
            } catch (final RuntimeException e) {
                System.out.println(attempt + "\t" + e.getClass().getName() + "\t" + e.getMessage().replace('\n', ' '));
            }
        }
    }
}
