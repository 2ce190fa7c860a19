/**
 * streamcache's durable log: the aggregating writer, the log files and their records, recovery
 * and checkpoints, the location index and the reads from the files.
 *
 * <p>Exported: {@code io.streamcache.log} (the log's configuration, its SPI for log files, its
 * exceptions and statistics). The packages under {@code io.streamcache.log.internal} are the
 * segment store's, which builds on them; they may change in any release, and
 * {@code docs/api.md} lists the exported types.
 */
// "module": the qualified exports below name the segment store, which this module's build does not see.
@SuppressWarnings("module")
module io.streamcache.log {
    requires transitive io.streamcache.core;
    requires transitive io.netty.buffer;
    requires transitive io.netty.common;
    requires org.agrona.core;
    requires org.jctools.core;
    requires org.slf4j;
    requires java.management;
    requires static com.google.errorprone.annotations;

    exports io.streamcache.log;
    exports io.streamcache.log.internal to io.streamcache.segmentstore;
    exports io.streamcache.log.internal.history to io.streamcache.segmentstore;
    exports io.streamcache.log.internal.location to io.streamcache.segmentstore;
    exports io.streamcache.log.internal.recovery to io.streamcache.segmentstore;
}
