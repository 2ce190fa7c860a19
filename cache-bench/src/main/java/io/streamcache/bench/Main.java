package io.streamcache.bench;

import io.streamcache.bench.demo.BlockCacheDemo;

import java.util.Arrays;

/**
 * Entry point of the benchmark jar: runs one command in the calling thread and exits.
 *
 * <pre>
 *   java -jar streamcache-bench.jar            the main job (the block cache demo)
 *   java -jar streamcache-bench.jar demo       the same
 *   java -jar streamcache-bench.jar jmh ARGS   JMH with its own arguments (-h for help)
 * </pre>
 */
public final class Main {
    private Main() {
    }

    public static void main(final String[] args) throws Exception {
        final String command = args.length == 0 ? "demo" : args[0];
        final String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
        switch (command) {
            case "demo":
                System.exit(BlockCacheDemo.run(rest, System.out));
                break;
            case "jmh":
                org.openjdk.jmh.Main.main(rest);
                break;
            default:
                System.err.println("unknown command: " + command + " (expected: demo, jmh)");
                System.exit(2);
        }
    }
}
