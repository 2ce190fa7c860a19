package io.streamcache.bookkeeper;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.BookKeeperAdmin;
import org.apache.bookkeeper.common.component.LifecycleComponentStack;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.bookie.LedgerStorage;
import org.apache.bookkeeper.server.EmbeddedServer;
import org.apache.bookkeeper.server.conf.BookieConfiguration;
import org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;

/**
 * A real ZooKeeper server and real bookies in this JVM, each bookie built as BookKeeper's own
 * {@code Main.buildBookieServer} builds it (an {@link EmbeddedServer}, the path {@code bin/bookkeeper bookie} takes) on its own
 * journal and ledger directories and a port picked here: not thread-safe (one test thread
 * starts, stops and restarts bookies).
 */
// BookKeeper's clients and handles declare close() throws InterruptedException: try-with-resources is still right.
@SuppressWarnings("try")
final class LocalBookKeeperCluster implements AutoCloseable {

    private final Path root;
    private final ZooKeeperServer zooKeeper;
    private final NIOServerCnxnFactory zooKeeperConnections;
    private final String metadataUri;
    private final List<Bookie> bookies = new ArrayList<>();

    /** One bookie: its configuration (port and directories fixed for restarts) and, while it runs, its stack. */
    static final class Bookie {
        final ServerConfiguration conf;
        final Path directory;
        EmbeddedServer server;
        LifecycleComponentStack stack;

        Bookie(final ServerConfiguration conf, final Path directory) {
            this.conf = conf;
            this.directory = directory;
        }

        BookieId id() {
            return BookieId.parse(conf.getAdvertisedAddress() + ":" + conf.getBookiePort());
        }

        Path ledgerDirectory() {
            return directory.resolve("ledgers");
        }
    }

    /**
     * Starts ZooKeeper, writes the cluster's metadata, and starts {@code count} bookies whose
     * configuration {@code bookieConf} completes (storage class and its settings).
     */
    LocalBookKeeperCluster(final Path root, final int count, final Consumer<ServerConfiguration> bookieConf) throws Exception {
        this.root = root;
        final Path zkDir = Files.createDirectories(root.resolve("zookeeper"));
        zooKeeper = new ZooKeeperServer(zkDir.toFile(), zkDir.toFile(), 2000);
        zooKeeperConnections = new NIOServerCnxnFactory();
        zooKeeperConnections.configure(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200);
        zooKeeperConnections.startup(zooKeeper);
        metadataUri = "zk://127.0.0.1:" + zooKeeperConnections.getLocalPort() + "/ledgers";
        final ServerConfiguration init = new ServerConfiguration();
        init.setMetadataServiceUri(metadataUri);
        if (!BookKeeperAdmin.initNewCluster(init)) {
            throw new IllegalStateException("cannot initialise cluster metadata at metadataUri=" + metadataUri);
        }
        for (int i = 0; i < count; i++) {
            final Path dir = root.resolve("bookie-" + i);
            final ServerConfiguration conf = bookieConf(metadataUri, freePort(), dir);
            bookieConf.accept(conf);
            bookies.add(new Bookie(conf, dir));
        }
        for (int i = 0; i < count; i++) {
            start(i);
        }
    }

    /** The configuration of a bookie on {@code directory} (journal and ledger directories in it) and {@code port}. */
    static ServerConfiguration bookieConf(final String metadataUri, final int port, final Path directory) throws IOException {
        final ServerConfiguration conf = new ServerConfiguration();
        conf.setMetadataServiceUri(metadataUri);
        conf.setBookiePort(port);
        conf.setAdvertisedAddress("127.0.0.1");
        conf.setAllowLoopback(true);
        conf.setJournalDirName(Files.createDirectories(directory.resolve("journal")).toString());
        conf.setLedgerDirNames(new String[] {Files.createDirectories(directory.resolve("ledgers")).toString()});
        conf.setHttpServerEnabled(false);
        conf.setZkTimeout(20_000);
        conf.setDiskUsageThreshold(0.99f);
        conf.setDiskUsageWarnThreshold(0.98f);
        return conf;
    }

    String metadataUri() {
        return metadataUri;
    }

    Path root() {
        return root;
    }

    List<Bookie> bookies() {
        return bookies;
    }

    ClientConfiguration clientConf() {
        final ClientConfiguration conf = new ClientConfiguration();
        conf.setMetadataServiceUri(metadataUri);
        conf.setZkTimeout(20_000);
        return conf;
    }

    BookKeeper client() throws Exception {
        return new BookKeeper(clientConf());
    }

    /** @return the ledger storage of running bookie {@code index}. */
    LedgerStorage storage(final int index) {
        return bookies.get(index).server.getBookieService().getServer().getBookie().getLedgerStorage();
    }

    /** Starts bookie {@code index} (again) and waits until it is registered as available. */
    void start(final int index) throws Exception {
        final Bookie bookie = bookies.get(index);
        if (bookie.stack != null) {
            throw new IllegalStateException("bookie index=" + index + " is running");
        }
        // What Main.buildBookieServer does, keeping the server to reach its storage.
        bookie.server = EmbeddedServer.builder(new BookieConfiguration(bookie.conf)).build();
        bookie.stack = bookie.server.getLifecycleComponentStack();
        bookie.stack.start();
        awaitAvailable(bookie.id(), true);
    }

    /** Shuts bookie {@code index} down the way the bookie does on SIGTERM, and waits until it is unregistered. */
    void stop(final int index) throws Exception {
        final Bookie bookie = bookies.get(index);
        if (bookie.stack == null) {
            return;
        }
        bookie.stack.close();
        bookie.stack = null;
        bookie.server = null;
        awaitAvailable(bookie.id(), false);
    }

    void awaitAvailable(final BookieId id, final boolean available) throws Exception {
        final ClientConfiguration conf = clientConf();
        try (BookKeeperAdmin admin = new BookKeeperAdmin(conf)) {
            final long deadline = System.nanoTime() + 60_000_000_000L;
            while (true) {
                final Collection<BookieId> ids = admin.getAvailableBookies();
                if (ids.contains(id) == available) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("bookie=" + id + " did not become available=" + available + " in 60 s; available=" + ids);
                }
                Thread.sleep(50);
            }
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }

    @Override
    public void close() throws Exception {
        Exception failure = null;
        for (int i = 0; i < bookies.size(); i++) {
            try {
                final Bookie bookie = bookies.get(i);
                if (bookie.stack != null) {
                    bookie.stack.close();
                    bookie.stack = null;
                }
            } catch (final Exception e) {
                failure = e;
            }
        }
        zooKeeperConnections.shutdown();
        zooKeeper.shutdown();
        if (failure != null) {
            throw failure;
        }
    }
}
