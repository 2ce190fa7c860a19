/**
 * streamcache's segment store: append-only segments cached in a {@code BlockCache}, tail reads
 * that wait, read-through from the durable log ({@code io.streamcache.log}), compaction,
 * eviction policies and a message-queue facade.
 *
 * <p>Exported: {@code io.streamcache.segmentstore} (the store, its reads, its exceptions),
 * {@code ...eviction} (the cache manager and the eviction policies, with the SPI to write one),
 * {@code ...compaction} (compaction and retention settings) and
 * {@code ...queue} (the message-queue facade). Everything under {@code ...internal} may change in
 * any release; {@code docs/api.md} lists the exported types.
 */
module io.streamcache.segmentstore {
    requires transitive io.streamcache.core;
    requires transitive io.streamcache.log;
    requires transitive io.netty.buffer;
    requires transitive io.netty.common;
    requires org.agrona.core;
    requires org.jctools.core;
    requires org.slf4j;
    requires static com.google.errorprone.annotations;
    requires java.management;
    requires jdk.unsupported;

    exports io.streamcache.segmentstore;
    exports io.streamcache.segmentstore.eviction;
    exports io.streamcache.segmentstore.compaction;
    exports io.streamcache.segmentstore.queue;
}
