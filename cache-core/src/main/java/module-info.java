/**
 * streamcache's block cache: fixed-size blocks in off-heap memory regions (direct memory, a
 * memory-mapped file, PMEM), chained into entries, in tiers.
 *
 * <p>Exported: {@code io.streamcache.core} (the exception hierarchy and the thread roles),
 * {@code io.streamcache.core.cache} (the cache, its handler, statistics and MBean) and
 * {@code io.streamcache.core.memory} (the memory regions). Everything else is internal and may
 * change in any release; {@code docs/api.md} lists the exported types.
 */
// "module": the qualified export below names the log and the segment store, which this module's build does not see.
@SuppressWarnings("module")
module io.streamcache.core {
    requires transitive io.netty.buffer;
    requires io.netty.common;
    requires org.agrona.core;
    requires org.jctools.core;
    requires org.slf4j;
    requires static com.google.errorprone.annotations;
    requires static llpl;
    requires java.management;
    requires jdk.management;
    requires jdk.unsupported;

    exports io.streamcache.core;
    exports io.streamcache.core.cache;
    exports io.streamcache.core.memory;
    // The library's own waits through interrupts, shared with the log and the segment store (not an API).
    exports io.streamcache.core.internal.concurrent to io.streamcache.log, io.streamcache.segmentstore;
}
