package io.streamcache.pulsar;

import io.streamcache.bookkeeper.StreamcacheLedgerStorage;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.common.component.LifecycleComponentStack;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.server.Main;
import org.apache.bookkeeper.server.conf.BookieConfiguration;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A bookie alone in a JVM, built as {@code bin/bookkeeper bookie} builds it:
 * {@code BookieMain <metadataUri> <port> <directory> <streamcache|db>}. The storage keeps its
 * default settings (each sizes its memory from the JVM's direct-memory limit). It runs until
 * killed; single-threaded main.
 */
public final class BookieMain {

    private BookieMain() {
    }

    public static void main(final String[] args) throws Exception {
        final Path directory = Path.of(args[2]);
        final ServerConfiguration conf = new ServerConfiguration();
        conf.setMetadataServiceUri(args[0]);
        conf.setBookiePort(Integer.parseInt(args[1]));
        conf.setAdvertisedAddress("127.0.0.1");
        conf.setAllowLoopback(true);
        conf.setJournalDirName(Files.createDirectories(directory.resolve("journal")).toString());
        conf.setLedgerDirNames(new String[] {Files.createDirectories(directory.resolve("ledgers")).toString()});
        conf.setHttpServerEnabled(false);
        // A killed bookie's registration lapses after this; its restart waits for that.
        conf.setZkTimeout(6_000);
        conf.setDiskUsageThreshold(0.99f);
        conf.setDiskUsageWarnThreshold(0.98f);
        conf.setLedgerStorageClass(storageClass(args[3]));
        final LifecycleComponentStack stack = Main.buildBookieServer(new BookieConfiguration(conf));
        stack.start();
        ChildProcess.ready("bookie started port=" + args[1] + " storage=" + args[3]);
        Thread.sleep(Long.MAX_VALUE);
    }

    static String storageClass(final String storage) {
        switch (storage) {
            case "streamcache":
                return StreamcacheLedgerStorage.class.getName();
            case "db":
                return DbLedgerStorage.class.getName();
            default:
                throw new IllegalArgumentException("storage=" + storage + " is neither streamcache nor db");
        }
    }
}
