package io.streamcache.pulsar;

import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.common.policies.data.TopicType;

import java.util.Optional;

/**
 * A Pulsar broker alone in a JVM, Pulsar's {@link PulsarService} on a {@link ServiceConfiguration}
 * built here: {@code BrokerMain <zkPort> <brokerPort> <webPort> <cacheMB>}. Every managed ledger is
 * written with ensemble 3, write quorum 3, ack quorum 2. SIGTERM closes the broker (its topics
 * unloaded, ledgers closed) before the JVM exits; single-threaded main.
 */
public final class BrokerMain {

    /** The cluster's name in the metadata store. */
    static final String CLUSTER = "streamcache";

    private BrokerMain() {
    }

    public static void main(final String[] args) throws Exception {
        final String zk = "zk:127.0.0.1:" + args[0];
        final ServiceConfiguration conf = new ServiceConfiguration();
        conf.setClusterName(CLUSTER);
        conf.setMetadataStoreUrl(zk);
        conf.setConfigurationMetadataStoreUrl(zk);
        conf.setBindAddress("127.0.0.1");
        conf.setAdvertisedAddress("127.0.0.1");
        conf.setBrokerServicePort(Optional.of(Integer.parseInt(args[1])));
        conf.setWebServicePort(Optional.of(Integer.parseInt(args[2])));
        conf.setManagedLedgerDefaultEnsembleSize(3);
        conf.setManagedLedgerDefaultWriteQuorum(3);
        conf.setManagedLedgerDefaultAckQuorum(2);
        conf.setManagedLedgerCacheSizeMB(Integer.parseInt(args[3]));
        // Partitioned topics created on first use, as the tests name them.
        conf.setAllowAutoTopicCreationType(TopicType.PARTITIONED);
        conf.setDefaultNumPartitions(4);
        // One machine, one broker: no rack placement across bookies, no load shedding.
        conf.setBookkeeperClientRackawarePolicyEnabled(false);
        conf.setLoadBalancerEnabled(false);
        conf.setMetadataStoreSessionTimeoutMillis(10_000);
        conf.setBrokerShutdownTimeoutMs(20_000);
        conf.setNumIOThreads(2);
        conf.setNumOrderedExecutorThreads(2);
        conf.setNumExecutorThreadPoolSize(2);
        conf.setExposeTopicLevelMetricsInPrometheus(false);
        final PulsarService pulsar = new PulsarService(conf);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                pulsar.close();
            } catch (final Exception e) {
                e.printStackTrace();
            }
        }, "broker-shutdown"));
        pulsar.start();
        ChildProcess.ready("broker started port=" + args[1]);
        Thread.sleep(Long.MAX_VALUE);
    }
}
