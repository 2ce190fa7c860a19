package io.streamcache.it.api;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmarks, the integration modules and these tests run on the class path, where the JVM
 * does not stop them from importing the library's internal packages. The rule is kept here:
 * every source file outside the library modules that imports an {@code ...internal...} package
 * must be named, with the reason, in {@code docs/api.md}'s "Who uses internals" section.
 */
class ApiBoundaryTest {
    private static final Pattern INTERNAL_IMPORT = Pattern.compile("^import (static )?io\\.streamcache\\.[a-z.]*internal[a-z.]*\\.",
        Pattern.MULTILINE);
    private static final List<String> CONSUMERS = List.of("cache-bench/src/main/java", "cache-bench/src/test/java",
        "cache-it/src/test/java", "cache-pravega/src/main/java", "cache-pravega/src/test/java",
        "cache-bookkeeper/src/main/java", "cache-bookkeeper/src/test/java", "cache-micrometer/src/main/java",
        "cache-micrometer/src/test/java");

    @Test
    void shouldNameEveryUserOfAnInternalPackageInTheApiDocs() throws IOException {
        final Path root = projectRoot();
        final String api = Files.readString(root.resolve("docs/api.md"), StandardCharsets.UTF_8);
        final int section = api.indexOf("## Who uses internals");
        assertTrue(section >= 0, "docs/api.md has no 'Who uses internals' section");
        final String allowed = api.substring(section);
        final List<String> unnamed = new ArrayList<>();
        int users = 0;
        for (final String consumer : CONSUMERS) {
            final Path dir = root.resolve(consumer);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(dir)) {
                for (final Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    final Matcher m = INTERNAL_IMPORT.matcher(Files.readString(file, StandardCharsets.UTF_8));
                    if (m.find()) {
                        users++;
                        final String name = file.getFileName().toString().replace(".java", "");
                        if (!Pattern.compile("\\b" + name + "\\b").matcher(allowed).find()) {
                            unnamed.add(root.relativize(file).toString());
                        }
                    }
                }
            }
        }
        assertTrue(users > 0, "the scan found no user of internals at all: wrong root " + root + "?");
        assertTrue(unnamed.isEmpty(), "these files import internal packages but docs/api.md does not name them: " + unnamed);
    }

    @Test
    void shouldFindAFileThatBreaksTheRule() throws IOException {
        // The check above must be able to fail: a file importing an internal package is seen.
        final String source = "package x;\n\nimport io.streamcache.log.internal.LogDirectory;\n";
        assertTrue(INTERNAL_IMPORT.matcher(source).find());
        assertTrue(!INTERNAL_IMPORT.matcher("import io.streamcache.log.LogConfig;\n").find());
    }

    private static Path projectRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("docs/api.md"))) {
            dir = dir.getParent();
        }
        assertTrue(dir != null, "no docs/api.md above " + Path.of("").toAbsolutePath());
        return dir;
    }
}
