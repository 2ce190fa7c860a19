package io.streamcache.it.arch;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The drawing of the library's main code, checked from its class files with ArchUnit
 * (https://www.archunit.org): no import circle between the modules, no circle of classes that
 * crosses a package line, and the arrows point down (core, then the log, then the store). Run alone with
 * {@code mvn -B -pl cache-it -am test -Dtest=ArchitectureTest -Dsurefire.failIfNoSpecifiedTests=false};
 * a violation names each cycle's classes and the calls that close it.
 *
 * <p>One test thread; imports the classes once (about a second).
 */
class ArchitectureTest {
    private static final String[] LIBRARY = {"io.streamcache.core", "io.streamcache.log", "io.streamcache.segmentstore"};

    private static JavaClasses library;

    @BeforeAll
    static void importLibrary() {
        library = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(LIBRARY);
        assertTrue(library.size() > 300, "imported only " + library.size() + " classes: the library's are not on the class path?");
    }

    /** {@code io.streamcache.core}, {@code ...log}, {@code ...segmentstore}: each a slice. */
    @Test
    void shouldHaveNoCycleBetweenModules() {
        slices().matching("io.streamcache.(*)..").should().beFreeOfCycles().check(library);
    }

    /**
     * No circle of classes that crosses a package line: a class of an exported package and an
     * internal one that use each other (the exported one installing a static bridge the internal
     * one calls back through, say, or an internal interface that names the exported class it is
     * taken from), or two internal packages that do. Classes of one package may use each other
     * freely. Checked on the class graph (a nested class counts as its top-level class): each
     * strongly connected component (Tarjan) must lie in one package. The store's parts meet
     * through interfaces handed over when the store is built (the cache manager's hooks, the
     * compactor's writer and directory), so there is no allowance here.
     */
    @Test
    void shouldHaveNoClassCycleAcrossPackages() {
        final Map<String, Set<String>> cycles = crossPackageCycles(library);
        assertTrue(cycles.isEmpty(), () -> "circles of classes across packages: " + cycles.values());
    }

    @Test
    void shouldKeepTheLogBelowTheStore() {
        noClasses().that().resideInAPackage("io.streamcache.log..")
            .should().dependOnClassesThat().resideInAPackage("io.streamcache.segmentstore..").check(library);
        noClasses().that().resideInAPackage("io.streamcache.core..")
            .should().dependOnClassesThat().resideInAnyPackage("io.streamcache.log..", "io.streamcache.segmentstore..").check(library);
    }

    /** The checks must be able to fail: two classes of this test, in two packages, that use each other. */
    @Test
    void shouldSeeACycle() {
        final JavaClasses cyclic = new ClassFileImporter().importPackages("io.streamcache.it.arch.cycle");
        final EvaluationResult result = slices().matching("io.streamcache.it.arch.cycle.(*)..").should().beFreeOfCycles().evaluate(cyclic);
        assertTrue(result.hasViolation(), "the slice cycle between cycle.a and cycle.b was not seen");
        assertEquals(Set.of("io.streamcache.it.arch.cycle.a.Up", "io.streamcache.it.arch.cycle.b.Down"),
            crossPackageCycles(cyclic).values().iterator().next());
    }

    /**
     * @return each component of the class graph of {@code classes} that spans packages, by its
     *         first class's name: the classes in it (nested classes folded into their top-level class).
     */
    static Map<String, Set<String>> crossPackageCycles(final JavaClasses classes) {
        final Map<String, Set<String>> edges = new TreeMap<>();
        for (final JavaClass c : classes) {
            final String from = topLevel(c);
            final Set<String> to = edges.computeIfAbsent(from, k -> new TreeSet<>());
            for (final Dependency d : c.getDirectDependenciesFromSelf()) {
                final JavaClass target = d.getTargetClass();
                if (classes.contain(target.getName())) {
                    final String name = topLevel(target);
                    if (!name.equals(from)) {
                        to.add(name);
                    }
                }
            }
        }
        final Map<String, Set<String>> found = new TreeMap<>();
        for (final Set<String> component : new Tarjan(edges).components()) {
            final Set<String> packages = new TreeSet<>();
            component.forEach(name -> packages.add(name.substring(0, name.lastIndexOf('.'))));
            if (packages.size() > 1) {
                found.put(component.iterator().next(), component);
            }
        }
        return found;
    }

    private static String topLevel(final JavaClass c) {
        JavaClass outer = c;
        while (outer.getEnclosingClass().isPresent()) {
            outer = outer.getEnclosingClass().get();
        }
        return outer.getName();
    }

    /** Tarjan's strongly connected components, iterative (the graph is a few hundred nodes deep at most). */
    private static final class Tarjan {
        private final Map<String, Set<String>> edges;
        private final Map<String, Integer> index = new HashMap<>();
        private final Map<String, Integer> low = new HashMap<>();
        private final Deque<String> stack = new ArrayDeque<>();
        private final Set<String> onStack = new TreeSet<>();
        private final List<Set<String>> components = new ArrayList<>();
        private int next;

        Tarjan(final Map<String, Set<String>> edges) {
            this.edges = edges;
        }

        List<Set<String>> components() {
            for (final String v : edges.keySet()) {
                if (!index.containsKey(v)) {
                    visit(v);
                }
            }
            return components;
        }

        private void visit(final String root) {
            final Deque<Object[]> work = new ArrayDeque<>();
            open(root);
            work.push(new Object[] {root, edges.getOrDefault(root, Set.of()).iterator()});
            while (!work.isEmpty()) {
                final Object[] frame = work.peek();
                final String v = (String) frame[0];
                @SuppressWarnings("unchecked")
                final java.util.Iterator<String> it = (java.util.Iterator<String>) frame[1];
                if (it.hasNext()) {
                    final String w = it.next();
                    if (!index.containsKey(w)) {
                        open(w);
                        work.push(new Object[] {w, edges.getOrDefault(w, Set.of()).iterator()});
                    } else if (onStack.contains(w)) {
                        low.put(v, Math.min(low.get(v), index.get(w)));
                    }
                    continue;
                }
                work.pop();
                if (!work.isEmpty()) {
                    final String parent = (String) work.peek()[0];
                    low.put(parent, Math.min(low.get(parent), low.get(v)));
                }
                if (low.get(v).equals(index.get(v))) {
                    final Set<String> component = new TreeSet<>();
                    String w;
                    do {
                        w = stack.pop();
                        onStack.remove(w);
                        component.add(w);
                    } while (!w.equals(v));
                    components.add(component);
                }
            }
        }

        private void open(final String v) {
            index.put(v, next);
            low.put(v, next);
            next++;
            stack.push(v);
            onStack.add(v);
        }
    }
}
