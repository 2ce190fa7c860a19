package io.streamcache.it.api;

import com.sun.source.doctree.DocCommentTree;
import com.sun.source.doctree.DocTree;
import com.sun.source.doctree.ReferenceTree;
import com.sun.source.util.DocTreePath;
import com.sun.source.util.DocTreePathScanner;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.PackageElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.util.Elements;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The published Javadoc links only to what it publishes: every {@code {@link}},
 * {@code {@linkplain}}, {@code @see} and {@code @throws} in the documentation of the exported
 * packages' public and protected elements (what {@code -protected} javadoc renders) must name a
 * public or protected element of an exported package, or one outside the library
 * ({@code {@value}} is not checked: it writes the constant in place). javadoc
 * itself (JDK 17 to 25, with {@code -Xdoclint:reference}, which the build runs) renders a link to
 * a package-private member or an internal package silently as plain text, so a reader found
 * {@code #logWriter()} and {@code SegmentStore#locations(String)} in the API pages and could not
 * follow them. The sources are attributed with the JDK's compiler API, as javadoc does.
 */
@Timeout(300)
class ApiJavadocLinksTest {
    private static final List<String> MODULES = List.of("cache-core", "cache-log", "cache-segmentstore");
    private static final Pattern EXPORTS = Pattern.compile("^\\s*exports\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);

    @Test
    void shouldLinkOnlyToPublishedElementsFromThePublishedJavadoc() throws IOException {
        final Path root = projectRoot();
        final Set<String> exported = new TreeSet<>();
        final List<Path> sources = new ArrayList<>();
        for (final String module : MODULES) {
            final Path dir = root.resolve(module).resolve("src/main/java");
            final Matcher m = EXPORTS.matcher(Files.readString(dir.resolve("module-info.java"), StandardCharsets.UTF_8));
            while (m.find()) {
                exported.add(m.group(1));
            }
            try (Stream<Path> files = Files.walk(dir)) {
                files.filter(f -> f.toString().endsWith(".java") && !f.endsWith("module-info.java")).forEach(sources::add);
            }
        }
        final JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        final List<String> problems = new ArrayList<>();
        int checked = 0;
        try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            final Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromPaths(sources);
            final JavacTask task = (JavacTask) compiler.getTask(null, files, d -> { }, List.of("-proc:none", "-Xlint:none",
                "-classpath", System.getProperty("java.class.path")), null, units);
            task.analyze();
            final DocTrees trees = DocTrees.instance(task);
            final Elements elements = task.getElements();
            for (final String name : exported) {
                final PackageElement pkg = elements.getPackageElement(name);
                if (pkg == null) {
                    problems.add("exported package " + name + " not found");
                    continue;
                }
                for (final Element type : pkg.getEnclosedElements()) {
                    checked += check(type, trees, exported, problems);
                }
            }
        }
        assertTrue(checked > 100, "only " + checked + " references checked: is the scan looking at the right sources?");
        assertTrue(problems.isEmpty(), () -> problems.size() + " Javadoc references to unpublished elements:\n  "
            + String.join("\n  ", problems));
    }

    /** Checks {@code element}'s documentation and, if it is a type, its published members'; returns references checked. */
    private static int check(final Element element, final DocTrees trees, final Set<String> exported, final List<String> problems) {
        if (!published(element)) {
            return 0;
        }
        int checked = 0;
        final DocCommentTree doc = trees.getDocCommentTree(element);
        if (doc != null) {
            final DocTreePath root = new DocTreePath(trees.getPath(element), doc);
            final int[] count = {0};
            new DocTreePathScanner<Void, Void>() {
                @Override
                public Void visitReference(final ReferenceTree reference, final Void unused) {
                    if (getCurrentPath().getParentPath().getLeaf().getKind() == DocTree.Kind.VALUE) {
                        // {@value}: the constant's value is written in place, there is no link to follow.
                        return null;
                    }
                    count[0]++;
                    final Element target = trees.getElement(getCurrentPath());
                    final String where = owner(element) + ": " + reference.getSignature();
                    if (target == null) {
                        problems.add(where + " does not resolve");
                    } else if (!visible(target, exported)) {
                        problems.add(where + " is not published (" + target.getKind() + " " + target.getModifiers() + " in "
                            + owner(target) + ")");
                    }
                    return super.visitReference(reference, unused);
                }
            }.scan(root, null);
            checked += count[0];
        }
        if (element instanceof TypeElement) {
            for (final Element member : element.getEnclosedElements()) {
                checked += check(member, trees, exported, problems);
            }
        }
        return checked;
    }

    /** Rendered by {@code -protected} javadoc: public or protected, inside types that are. */
    private static boolean published(final Element element) {
        for (Element e = element; e != null && e.getKind() != ElementKind.PACKAGE; e = e.getEnclosingElement()) {
            final Set<Modifier> modifiers = e.getModifiers();
            if (!modifiers.contains(Modifier.PUBLIC) && !modifiers.contains(Modifier.PROTECTED)) {
                // Enum constants, record components and interface members are public implicitly.
                final Element parent = e.getEnclosingElement();
                final boolean implicit = parent != null && (parent.getKind() == ElementKind.INTERFACE
                    || parent.getKind() == ElementKind.ANNOTATION_TYPE || e.getKind() == ElementKind.ENUM_CONSTANT);
                if (!implicit) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean visible(final Element target, final Set<String> exported) {
        if (target.getKind() == ElementKind.PACKAGE) {
            final String name = ((PackageElement) target).getQualifiedName().toString();
            return !name.startsWith("io.streamcache") || exported.contains(name);
        }
        Element e = target;
        while (e.getKind() != ElementKind.PACKAGE) {
            e = e.getEnclosingElement();
        }
        final String pkg = ((PackageElement) e).getQualifiedName().toString();
        if (!pkg.startsWith("io.streamcache")) {
            return true;
        }
        return exported.contains(pkg) && published(target);
    }

    private static String owner(final Element element) {
        Element e = element;
        while (e != null && !(e instanceof TypeElement)) {
            e = e.getEnclosingElement();
        }
        final String type = e == null ? "?" : ((TypeElement) e).getQualifiedName().toString();
        return e == element ? type : type + "#" + element.getSimpleName();
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
