package io.streamcache.bench;

import io.streamcache.bench.demo.BlockCacheDemo;
import io.streamcache.bench.stress.StressHarness;

import java.util.Arrays;

/**
 * Entry point of the benchmark jar: runs one command in the calling thread and exits.
 *
 * <pre>
 *   java -jar streamcache-bench.jar            the main job: the stress test with its defaults
 *   java -jar streamcache-bench.jar stress ARGS the stress test (--help for its flags)
 *   java -jar streamcache-bench.jar cachebench ARGS  the block cache alone, after RocksDB's cache_bench (--help)
 *   java -jar streamcache-bench.jar demo       the block cache demo (self-checking)
 *   java -jar streamcache-bench.jar simulate ARGS  the eviction-policy simulator (--help)
 *   java -jar streamcache-bench.jar compaction ARGS  disk use of a log with an idle segment, compaction on or off
 *   java -jar streamcache-bench.jar damage ARGS    damage trials on copies of a log (--help)
 *   java -jar streamcache-bench.jar mq ARGS    the contest-shaped message-queue workload (--help)
 *   java -jar streamcache-bench.jar contest ARGS  a contest-style evaluator over the facade or any store class (--help)
 *   java -jar streamcache-bench.jar resize ARGS  a shrink and grow under appends and reads: time, throughput, RSS (--help)
 *   java -jar streamcache-bench.jar jmh ARGS   JMH with its own arguments (-h for help)
 * </pre>
 */
public final class Main {
    private Main() {
    }

    public static void main(final String[] args) throws Exception {
        final boolean flagsOnly = args.length == 0 || args[0].startsWith("-");
        final String command = flagsOnly ? "stress" : args[0];
        final String[] rest = flagsOnly ? args : Arrays.copyOfRange(args, 1, args.length);
        switch (command) {
            case "stress":
                System.exit(StressHarness.run(rest, System.out));
                break;
            case "cachebench": System.exit(io.streamcache.bench.cachebench.CacheBench.run(rest, System.out)); break;
            case "demo":
                System.exit(BlockCacheDemo.run(rest, System.out));
                break;
            case "simulate": System.exit(io.streamcache.bench.sim.SimulateCommand.run(rest, System.out)); break;
            case "compaction": System.exit(io.streamcache.bench.compaction.CompactionDiskUse.run(rest, System.out)); break;
            case "damage": System.exit(io.streamcache.bench.damage.DamageCommand.run(rest, System.out)); break;
            case "mq": System.exit(io.streamcache.bench.mq.MqBench.run(rest, System.out)); break;
            case "contest": System.exit(io.streamcache.bench.mq.ContestEval.run(rest, System.out)); break;
            case "resize": System.exit(io.streamcache.bench.resize.ResizeBench.run(rest, System.out)); break;
            case "forces": System.exit(io.streamcache.bench.mq.ParallelForces.run(rest, System.out)); break;
            case "jmh":
                org.openjdk.jmh.Main.main(rest);
                break;
            default:
                System.err.println("unknown command: " + command + " (expected: stress, cachebench, demo, simulate, compaction, damage, mq, resize, forces, jmh)");
                System.exit(2);
        }
    }
}
