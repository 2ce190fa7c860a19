package io.streamcache.bench.damage;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The {@code damage} command of the benchmark jar: damage trials on copies of a log
 * ({@link DamageTrials}); one run on the calling thread.
 *
 * <pre>
 *   damage [--appends N] [--trials T] [--seed S] [--dir PATH]
 * </pre>
 * Exits 0 if every trial kept every acknowledged record or failed the open naming the damaged
 * file, 1 on any silent loss, wrong byte or wrong file named, 2 on bad arguments.
 */
public final class DamageCommand {
    private DamageCommand() {
    }

    public static int run(final String[] args, final PrintStream out) throws IOException {
        int appends = 20_000;
        int trials = 300;
        long seed = 1;
        Path dir = null;
        for (int i = 0; i < args.length; i++) {
            final String flag = args[i];
            if (flag.equals("--help")) {
                out.println("damage [--appends N=20000] [--trials T=300] [--seed S=1] [--dir PATH (a new temporary directory)]");
                return 0;
            }
            if (i + 1 >= args.length) {
                out.println("flag=" + flag + " needs a value");
                return 2;
            }
            final String value = args[++i];
            try {
                switch (flag) {
                    case "--appends" -> appends = Integer.parseInt(value);
                    case "--trials" -> trials = Integer.parseInt(value);
                    case "--seed" -> seed = Long.parseLong(value);
                    case "--dir" -> dir = Path.of(value);
                    default -> {
                        out.println("unknown flag=" + flag + " (expected --appends, --trials, --seed, --dir)");
                        return 2;
                    }
                }
            } catch (final NumberFormatException e) {
                out.println(flag + "=" + value + " is not a number");
                return 2;
            }
        }
        if (appends < 1 || trials < 1) {
            out.println("appends=" + appends + " and trials=" + trials + " must be >= 1");
            return 2;
        }
        final Path work = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("streamcache-damage");
        final long started = System.nanoTime();
        final DamageTrials run = new DamageTrials(work, seed, appends);
        run.build();
        run.run(0, trials);
        run.print(out);
        out.printf("appends=%d trials=%d seed=%d in %.1f s%n", appends, trials, seed, (System.nanoTime() - started) / 1e9);
        return run.failures().isEmpty() ? 0 : 1;
    }
}
