package io.streamcache.bookkeeper;

import org.apache.bookkeeper.common.component.LifecycleComponentStack;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.server.Main;
import org.apache.bookkeeper.server.conf.BookieConfiguration;

import java.nio.file.Path;

/**
 * A bookie on {@link StreamcacheLedgerStorage} alone in a JVM, for the tests that kill it with
 * SIGKILL: {@code BookieProcess <metadataUri> <port> <directory> <journalWriteData>}. It runs
 * until killed; single-threaded main.
 */
public final class BookieProcess {

    private BookieProcess() {
    }

    public static void main(final String[] args) throws Exception {
        final ServerConfiguration conf = LocalBookKeeperCluster.bookieConf(args[0], Integer.parseInt(args[1]), Path.of(args[2]));
        BookKeeperClusterTest.streamcacheBookie(conf);
        conf.setJournalWriteData(Boolean.parseBoolean(args[3]));
        final LifecycleComponentStack stack = Main.buildBookieServer(new BookieConfiguration(conf));
        stack.start();
        System.out.println("bookie started port=" + args[1]);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
