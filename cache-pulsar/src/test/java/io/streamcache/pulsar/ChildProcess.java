package io.streamcache.pulsar;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A JVM started from this JVM's class path running one main class, its output in a log file:
 * not thread-safe (one test thread starts and stops it). {@link #kill()} is SIGKILL,
 * {@link #stop()} SIGTERM (the child's shutdown hooks run).
 */
final class ChildProcess implements AutoCloseable {

    private final String name;
    private final Path log;
    private final Process process;

    private ChildProcess(final String name, final Path log, final Process process) {
        this.name = name;
        this.log = log;
        this.process = process;
    }

    /**
     * Starts {@code main} with {@code args} under {@code jvmArgs} and waits up to
     * {@code timeoutSeconds} for the line {@code ready} in its output.
     */
    static ChildProcess start(final String name, final Path log, final List<String> jvmArgs, final Class<?> main,
                              final List<String> args, final String ready, final int timeoutSeconds) throws Exception {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(args);
        Files.createDirectories(log.getParent());
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        final ChildProcess child = new ChildProcess(name, log, process);
        child.await(ready, timeoutSeconds);
        return child;
    }

    /** Waits until the log holds {@code line} from this process (a restart appends to the same log). */
    private void await(final String line, final int timeoutSeconds) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        final String marker = "pid=" + process.pid() + " " + line;
        while (true) {
            if (Files.readString(log).contains(marker)) {
                return;
            }
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with status=" + process.exitValue() + " before it was ready; log=" + log);
            }
            if (System.nanoTime() > deadline) {
                process.destroyForcibly().waitFor();
                throw new IllegalStateException(name + " not ready in " + timeoutSeconds + " s; log=" + log);
            }
            Thread.sleep(100);
        }
    }

    /** Prints the ready line a parent waits for: {@code pid=<pid> <line>}. */
    static void ready(final String line) {
        System.out.println("pid=" + ProcessHandle.current().pid() + " " + line);
        System.out.flush();
    }

    /** Runs {@code main} to completion and fails if it exits with a non-zero status. */
    static void run(final String name, final Path log, final List<String> jvmArgs, final String main,
                    final List<String> args, final int timeoutSeconds) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main);
        command.addAll(args);
        Files.createDirectories(log.getParent());
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new IllegalStateException(name + " did not finish in " + timeoutSeconds + " s; log=" + log);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException(name + " exited with status=" + process.exitValue() + "; log=" + log);
        }
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, and waits for the process to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** SIGTERM, and waits up to 60 s for the process to exit (then SIGKILL). */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
