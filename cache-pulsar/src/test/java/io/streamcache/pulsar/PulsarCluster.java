package io.streamcache.pulsar;

import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Pulsar cluster on loopback ports picked here: ZooKeeper in this JVM (the metadata store of the
 * broker and of the bookies), the cluster's metadata written by Pulsar's own
 * {@code PulsarClusterMetadataSetup} ({@code bin/pulsar initialize-cluster-metadata}), three
 * bookies and one broker, each in a child JVM: not thread-safe (one test thread starts, kills
 * and restarts the processes). {@link #close()} kills every child.
 */
final class PulsarCluster implements AutoCloseable {

    /** Each bookie: heap, and direct memory its storage sizes its caches from (the same for both storages). */
    static final List<String> BOOKIE_JVM = List.of("-Xmx256m", "-XX:MaxDirectMemorySize=512m",
        "--add-opens", "java.base/java.io=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
        "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED");
    /**
     * With {@code -Dstreamcache.pulsar.jfr=<settings>} (a JFR settings name, {@code profile} for
     * {@code true}) each bookie runs a flight recording named {@link #RECORDING} from its start;
     * {@link #dumpBookieRecordings} writes it out (the children are SIGKILLed, which writes nothing).
     */
    static final String JFR = System.getProperty("streamcache.pulsar.jfr", "");
    static final String RECORDING = "bookie";
    static final List<String> BROKER_JVM = List.of("-Xmx512m", "-XX:MaxDirectMemorySize=512m",
        "--add-opens", "java.base/java.io=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
        "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens", "java.base/java.util=ALL-UNNAMED");

    private final Path root;
    private final String storage;
    private final int brokerCacheMB;
    private final ZooKeeperServer zooKeeper;
    private final NIOServerCnxnFactory zooKeeperConnections;
    private final int zkPort;
    private final int brokerPort;
    private final int webPort;
    private final int[] bookiePorts;
    private final ChildProcess[] bookies;
    private ChildProcess broker;

    /**
     * Starts the cluster on {@code root}: bookies on {@code storage} ({@code streamcache} or
     * {@code db}), the broker's entry cache of {@code brokerCacheMB}.
     */
    PulsarCluster(final Path root, final String storage, final int bookieCount, final int brokerCacheMB) throws Exception {
        this.root = root;
        this.storage = storage;
        this.brokerCacheMB = brokerCacheMB;
        BookieMain.storageClass(storage);
        final Path zkDir = Files.createDirectories(root.resolve("zookeeper"));
        zooKeeper = new ZooKeeperServer(zkDir.toFile(), zkDir.toFile(), 2000);
        zooKeeperConnections = new NIOServerCnxnFactory();
        zooKeeperConnections.configure(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200);
        zooKeeperConnections.startup(zooKeeper);
        zkPort = zooKeeperConnections.getLocalPort();
        brokerPort = freePort();
        webPort = freePort();
        bookiePorts = new int[bookieCount];
        bookies = new ChildProcess[bookieCount];
        try {
            final String zk = "zk:127.0.0.1:" + zkPort;
            ChildProcess.run("metadata setup", root.resolve("logs/setup.log"), List.of("-Xmx256m"),
                "org.apache.pulsar.PulsarClusterMetadataSetup",
                List.of("--cluster", BrokerMain.CLUSTER, "--metadata-store", zk, "--configuration-metadata-store", zk,
                    "--web-service-url", "http://127.0.0.1:" + webPort, "--broker-service-url", serviceUrl(),
                    "--initial-num-stream-storage-containers", "0"), 120);
            for (int i = 0; i < bookieCount; i++) {
                bookiePorts[i] = freePort();
                startBookie(i);
            }
            startBroker();
        } catch (final Exception e) {
            try {
                close();
            } catch (final Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    String serviceUrl() {
        return "pulsar://127.0.0.1:" + brokerPort;
    }

    String storage() {
        return storage;
    }

    Path root() {
        return root;
    }

    /** A client of this cluster; it reconnects by itself across broker restarts. */
    PulsarClient client() throws PulsarClientException {
        return PulsarClient.builder().serviceUrl(serviceUrl())
            .operationTimeout(60, TimeUnit.SECONDS)
            .ioThreads(1).listenerThreads(1)
            .build();
    }

    void startBookie(final int index) throws Exception {
        if (bookies[index] != null) {
            throw new IllegalStateException("bookie index=" + index + " is running");
        }
        final List<String> jvm = new ArrayList<>(BOOKIE_JVM);
        if (!JFR.isEmpty()) {
            jvm.add("-XX:StartFlightRecording=name=" + RECORDING + ",settings=" + ("true".equals(JFR) ? "profile" : JFR) + ",disk=true,maxage=1h");
        }
        bookies[index] = ChildProcess.start("bookie-" + index, root.resolve("logs/bookie-" + index + ".log"), jvm,
            BookieMain.class, List.of("zk://127.0.0.1:" + zkPort + "/ledgers", Integer.toString(bookiePorts[index]),
                root.resolve("bookie-" + index).toString(), storage), "bookie started", 120);
    }

    /**
     * Writes each running bookie's flight recording to {@code <directory>/<prefix>-bookie-<i>.jfr}
     * with the JDK's {@code jcmd <pid> JFR.dump}; nothing without {@code -Dstreamcache.pulsar.jfr}.
     *
     * @return the files written.
     */
    List<Path> dumpBookieRecordings(final Path directory, final String prefix) throws IOException, InterruptedException {
        final List<Path> files = new ArrayList<>();
        if (JFR.isEmpty()) {
            return files;
        }
        Files.createDirectories(directory);
        for (int i = 0; i < bookies.length; i++) {
            if (bookies[i] == null) {
                continue;
            }
            final Path file = directory.resolve(prefix + "-bookie-" + i + ".jfr").toAbsolutePath();
            final Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(bookies[i].pid()), "JFR.dump", "name=" + RECORDING, "filename=" + file)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(root.resolve("logs/jcmd.log").toFile())).start();
            if (!jcmd.waitFor(120, TimeUnit.SECONDS) || jcmd.exitValue() != 0 || !Files.exists(file)) {
                jcmd.destroyForcibly();
                throw new IOException("jcmd JFR.dump of bookie-" + i + " failed; log=" + root.resolve("logs/jcmd.log"));
            }
            files.add(file);
        }
        return files;
    }

    /** SIGKILL of bookie {@code index}: its journal and storage as a power cut leaves them. */
    void killBookie(final int index) throws InterruptedException {
        bookies[index].kill();
        bookies[index] = null;
    }

    void startBroker() throws Exception {
        if (broker != null) {
            throw new IllegalStateException("the broker is running");
        }
        broker = ChildProcess.start("broker", root.resolve("logs/broker.log"), BROKER_JVM, BrokerMain.class,
            List.of(Integer.toString(zkPort), Integer.toString(brokerPort), Integer.toString(webPort), Integer.toString(brokerCacheMB)),
            "broker started", 180);
    }

    /** SIGTERM to the broker (it closes its topics and ledgers), then a new broker on the same ports. */
    void restartBroker() throws Exception {
        broker.stop();
        broker = null;
        startBroker();
    }

    /** Process ids of the children (broker first), for load figures. */
    List<Long> pids() {
        final List<Long> pids = new ArrayList<>();
        if (broker != null) {
            pids.add(broker.pid());
        }
        for (final ChildProcess bookie : bookies) {
            if (bookie != null) {
                pids.add(bookie.pid());
            }
        }
        return pids;
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }

    @Override
    public void close() {
        if (broker != null) {
            broker.close();
            broker = null;
        }
        for (int i = 0; i < bookies.length; i++) {
            if (bookies[i] != null) {
                bookies[i].close();
                bookies[i] = null;
            }
        }
        zooKeeperConnections.shutdown();
        zooKeeper.shutdown();
    }
}
