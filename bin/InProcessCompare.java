import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongUnaryOperator;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Compares benchmark jars inside one JVM, for a machine too loaded for JMH to resolve a few
 * percent: each jar gets its own class loader (so its own JIT-compiled code and profiles), the
 * same workload of {@code io.streamcache.bench.jmh.InProcessWorkloads} runs in each, and the
 * jars take turns in short slices (A B, then B A, ...), so that the other processes' noise falls
 * on all of them alike. Prints per jar the min, p10, p25, p50 and p90 of the slices' ns per
 * operation, and per later jar the paired ratio to the first (slices adjacent in time).
 *
 * <pre>
 *   java bin/InProcessCompare.java [--pause MS] [--rotate] WORKLOAD OPS_PER_SLICE SLICES JAR[@WORKLOAD] JAR[@WORKLOAD]...
 *   java -XX:MaxDirectMemorySize=4g bin/InProcessCompare.java copyRead 100000 200 before.jar after.jar
 *   java -XX:MaxDirectMemorySize=4g bin/InProcessCompare.java --pause 2 get 1000 400 \
 *        after.jar@get-blockcache after.jar@get-hashmap
 * </pre>
 * The workload classes are taken from the last jar that has them and defined in every loader from
 * those bytes, so a jar built before they existed runs them against its own cache. {@code @WORKLOAD}
 * gives one jar another workload (the stores of one jar side by side). {@code --pause MS} sleeps
 * before each slice (a JMH single-shot batch follows a pause: the thread parks); {@code --rotate}
 * keeps the order A B C every round, so each slice follows the same other one. Run it several
 * times: each JVM compiles differently, and a difference that holds across JVMs is the change's.
 * Needs only a JDK (single-file source).
 */
public final class InProcessCompare {
    private static final String WORKLOADS = "io.streamcache.bench.jmh.InProcessWorkloads";

    public static void main(final String[] args) throws Exception {
        int a = 0;
        long pause = 0;
        boolean rotate = false;
        while (a < args.length && args[a].startsWith("--")) {
            if (args[a].equals("--pause")) {
                pause = Long.parseLong(args[a + 1]);
                a += 2;
            } else if (args[a].equals("--rotate")) {
                rotate = true;
                a++;
            } else {
                throw new IllegalArgumentException("option=" + args[a]);
            }
        }
        if (args.length - a < 5) {
            System.err.println("usage: java bin/InProcessCompare.java [--pause MS] [--rotate] WORKLOAD OPS_PER_SLICE SLICES JAR[@WORKLOAD]...");
            System.exit(2);
        }
        final String workload = args[a];
        final long ops = Long.parseLong(args[a + 1]);
        final int slices = Integer.parseInt(args[a + 2]);
        final String[] specs = Arrays.copyOfRange(args, a + 3, args.length);
        final int k = specs.length;
        final Map<String, byte[]> classes = workloadClasses(specs);
        final LongUnaryOperator[] loops = new LongUnaryOperator[k];
        for (int j = 0; j < k; j++) {
            final ClassLoader loader = new WorkloadLoader(jar(specs[j]), classes);
            final String name = specs[j].contains("@") ? specs[j].substring(specs[j].indexOf('@') + 1) : workload;
            loops[j] = (LongUnaryOperator)loader.loadClass(WORKLOADS).getMethod("create", String.class).invoke(null, name);
        }
        long sink = 0;
        for (int s = 0; s < Math.max(20, slices / 4); s++) {
            for (int j = 0; j < k; j++) {
                sink += loops[j].applyAsLong(ops);
            }
        }
        final double[][] ns = new double[k][slices];
        for (int s = 0; s < slices; s++) {
            for (int i = 0; i < k; i++) {
                final int j = rotate || (s & 1) == 0 ? i : k - 1 - i;
                if (pause > 0) {
                    Thread.sleep(pause);
                }
                final long t0 = System.nanoTime();
                sink += loops[j].applyAsLong(ops);
                ns[j][s] = (System.nanoTime() - t0) / (double)ops;
            }
        }
        System.out.printf(Locale.ROOT, "%s, %d slices of %d operations per jar, ns/op%s%s (checksum %d)%n", workload, slices, ops,
            pause > 0 ? ", pause " + pause + " ms" : "", rotate ? ", rotating" : "", sink & 0xFF);
        for (int j = 0; j < k; j++) {
            final double[] x = ns[j].clone();
            Arrays.sort(x);
            System.out.printf(Locale.ROOT, "  %-50s min %8.2f  p10 %8.2f  p25 %8.2f  p50 %8.2f  p90 %8.2f%n", label(specs[j]),
                x[0], x[slices / 10], x[slices / 4], x[slices / 2], x[slices * 9 / 10]);
        }
        for (int j = 1; j < k; j++) {
            final double[] r = new double[slices];
            for (int s = 0; s < slices; s++) {
                r[s] = ns[j][s] / ns[0][s];
            }
            Arrays.sort(r);
            System.out.printf(Locale.ROOT, "  paired %s / %s: p25 %.3f  median %.3f  p75 %.3f%n", label(specs[j]), label(specs[0]),
                r[slices / 4], r[slices / 2], r[slices * 3 / 4]);
        }
        System.exit(0);
    }

    private static String jar(final String spec) {
        return spec.contains("@") ? spec.substring(0, spec.indexOf('@')) : spec;
    }

    private static String label(final String spec) {
        final String name = Path.of(jar(spec)).getFileName().toString();
        return spec.contains("@") ? name + spec.substring(spec.indexOf('@')) : name;
    }

    /** The bytes of the workload class and its nested classes, from the last jar that has them. */
    private static Map<String, byte[]> workloadClasses(final String[] specs) throws IOException {
        final String prefix = WORKLOADS.replace('.', '/');
        for (int j = specs.length - 1; j >= 0; j--) {
            final Map<String, byte[]> classes = new HashMap<>();
            try (JarFile jar = new JarFile(jar(specs[j]))) {
                for (final JarEntry e : (Iterable<JarEntry>)jar.stream()::iterator) {
                    final String n = e.getName();
                    if (n.equals(prefix + ".class") || n.startsWith(prefix + "$") && n.endsWith(".class")) {
                        try (InputStream in = jar.getInputStream(e)) {
                            classes.put(n.substring(0, n.length() - ".class".length()).replace('/', '.'), in.readAllBytes());
                        }
                    }
                }
            }
            if (!classes.isEmpty()) {
                return classes;
            }
        }
        throw new IllegalArgumentException("no jar holds " + WORKLOADS + ": build cache-bench from a tree that has it");
    }

    /** One jar's classes, plus the workload classes defined from the given bytes (taking precedence). */
    private static final class WorkloadLoader extends URLClassLoader {
        private final Map<String, byte[]> workloads;

        WorkloadLoader(final String jar, final Map<String, byte[]> workloads) throws IOException {
            super(jar, new URL[] {Path.of(jar).toUri().toURL()}, ClassLoader.getPlatformClassLoader());
            this.workloads = workloads;
        }

        @Override
        protected Class<?> loadClass(final String name, final boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null && workloads.containsKey(name)) {
                    final byte[] b = workloads.get(name);
                    c = defineClass(name, b, 0, b.length);
                }
                if (c == null) {
                    return super.loadClass(name, resolve);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
