package io.streamcache.bookkeeper;

import org.apache.bookkeeper.bookie.LedgerStorage;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.manipulation.Filter;
import org.junit.runner.notification.Failure;
import org.junit.runners.model.TestClass;
import org.junit.runners.parameterized.BlockJUnit4ClassRunnerWithParameters;
import org.junit.runners.parameterized.TestWithParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * BookKeeper's own test classes (JUnit 4, from its {@code tests} jar) run against bookies on
 * {@link StreamcacheLedgerStorage}: each is subclassed here only to set the storage class in its
 * {@code baseConf}, or, for the classes BookKeeper parameterizes by storage class, run with this
 * storage as the parameter. Slow (about ten minutes), so it runs only with
 * {@code -Dstreamcache.bk.ownTests=true}; the results are in docs/bookkeeper.md.
 */
class BookKeeperOwnTestsTest {

    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperOwnTestsTest.class);

    /**
     * The storage the classes run on: this one, or with -Dstreamcache.bk.ownTests.storage=db
     * BookKeeper's DbLedgerStorage, to compare a result under the same load and harness.
     */
    static Class<? extends LedgerStorage> storage() {
        return "db".equals(System.getProperty("streamcache.bk.ownTests.storage"))
            ? org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage.class : StreamcacheLedgerStorage.class;
    }

    static void onStreamcache(final ServerConfiguration conf) {
        // The storage class alone: every size is the storage's default, derived from what
        // BookKeeper's harness gives DbLedgerStorage (StreamcacheStorageSettings#defaultCacheBytes).
        conf.setLedgerStorageClass(storage().getName());
    }

    // ---- BookKeeper's cluster tests, with the storage class set ----

    public static class BookKeeperTest extends org.apache.bookkeeper.client.BookKeeperTest {
        public BookKeeperTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class BookieRecoveryTest extends org.apache.bookkeeper.client.BookieRecoveryTest {
        public BookieRecoveryTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class BookieWriteLedgerTest extends org.apache.bookkeeper.client.BookieWriteLedgerTest {
        public BookieWriteLedgerTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerRecoveryTest extends org.apache.bookkeeper.client.LedgerRecoveryTest {
        public LedgerRecoveryTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class ParallelLedgerRecoveryTest extends org.apache.bookkeeper.client.ParallelLedgerRecoveryTest {
        public ParallelLedgerRecoveryTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestFencing extends org.apache.bookkeeper.client.TestFencing {
        public TestFencing() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestReadEntryListener extends org.apache.bookkeeper.client.TestReadEntryListener {
        public TestReadEntryListener() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestParallelRead extends org.apache.bookkeeper.client.TestParallelRead {
        public TestParallelRead() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestBatchedRead extends org.apache.bookkeeper.client.TestBatchedRead {
        public TestBatchedRead() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class BookieFailureTest extends org.apache.bookkeeper.test.BookieFailureTest {
        public BookieFailureTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerCloseTest extends org.apache.bookkeeper.client.LedgerCloseTest {
        public LedgerCloseTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class MultipleThreadReadTest extends org.apache.bookkeeper.test.MultipleThreadReadTest {
        public MultipleThreadReadTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class BookieStickyReadsTest extends org.apache.bookkeeper.bookie.BookieStickyReadsTest {
        public BookieStickyReadsTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class BookieReadWriteTest extends org.apache.bookkeeper.test.BookieReadWriteTest {
        public BookieReadWriteTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerStorageTest extends org.apache.bookkeeper.bookie.LedgerStorageTest {
        public LedgerStorageTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestReadTimeout extends org.apache.bookkeeper.client.TestReadTimeout {
        public TestReadTimeout() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestSpeculativeRead extends org.apache.bookkeeper.client.TestSpeculativeRead {
        public TestSpeculativeRead() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestAddEntryQuorumTimeout extends org.apache.bookkeeper.client.TestAddEntryQuorumTimeout {
        public TestAddEntryQuorumTimeout() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestDelayEnsembleChange extends org.apache.bookkeeper.client.TestDelayEnsembleChange {
        public TestDelayEnsembleChange() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class SlowBookieTest extends org.apache.bookkeeper.client.SlowBookieTest {
        public SlowBookieTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerDeleteTest extends org.apache.bookkeeper.test.LedgerDeleteTest {
        public LedgerDeleteTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class BookKeeperCloseTest extends org.apache.bookkeeper.client.BookKeeperCloseTest {
        public BookKeeperCloseTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestTryReadLastConfirmed extends org.apache.bookkeeper.client.TestTryReadLastConfirmed {
        public TestTryReadLastConfirmed() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class TestDisableEnsembleChange extends org.apache.bookkeeper.client.TestDisableEnsembleChange {
        public TestDisableEnsembleChange() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class AsyncLedgerOpsTest extends org.apache.bookkeeper.test.AsyncLedgerOpsTest {
        public AsyncLedgerOpsTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class CloseTest extends org.apache.bookkeeper.test.CloseTest {
        public CloseTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerCreateDeleteTest extends org.apache.bookkeeper.test.LedgerCreateDeleteTest {
        public LedgerCreateDeleteTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    public static class ConditionalSetTest extends org.apache.bookkeeper.test.ConditionalSetTest {
        public ConditionalSetTest() throws Exception {
            onStreamcache(baseConf);
        }
    }

    /** Parameterized by digest type (BookKeeper's own parameters); the storage set in each. */
    public static class BookieWriteLedgersWithDifferentDigestsTest
        extends org.apache.bookkeeper.client.BookieWriteLedgersWithDifferentDigestsTest {
        public BookieWriteLedgersWithDifferentDigestsTest(final org.apache.bookkeeper.client.BookKeeper.DigestType digestType) {
            super(digestType);
            onStreamcache(baseConf);
        }
    }

    // ---- BookKeeper's tests parameterized by storage class, given this one ----

    public static class ExplicitLacTest extends org.apache.bookkeeper.client.ExplicitLacTest {
        public ExplicitLacTest(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    public static class TestPiggybackLAC extends org.apache.bookkeeper.client.TestPiggybackLAC {
        public TestPiggybackLAC(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    public static class TestReadLastConfirmedAndEntry extends org.apache.bookkeeper.client.TestReadLastConfirmedAndEntry {
        public TestReadLastConfirmedAndEntry(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    public static class TestReadLastConfirmedLongPoll extends org.apache.bookkeeper.client.TestReadLastConfirmedLongPoll {
        public TestReadLastConfirmedLongPoll(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    private static final List<Class<?>> PLAIN = List.of(
        BookKeeperTest.class, BookieRecoveryTest.class, BookieWriteLedgerTest.class, LedgerRecoveryTest.class,
        ParallelLedgerRecoveryTest.class, TestFencing.class, TestReadEntryListener.class, TestParallelRead.class,
        TestBatchedRead.class, BookieFailureTest.class, LedgerCloseTest.class, MultipleThreadReadTest.class,
        BookieStickyReadsTest.class, BookieReadWriteTest.class, LedgerStorageTest.class, TestReadTimeout.class,
        TestSpeculativeRead.class, TestAddEntryQuorumTimeout.class, TestDelayEnsembleChange.class,
        SlowBookieTest.class, LedgerDeleteTest.class, BookKeeperCloseTest.class, TestTryReadLastConfirmed.class,
        TestDisableEnsembleChange.class, AsyncLedgerOpsTest.class, CloseTest.class, LedgerCreateDeleteTest.class,
        ConditionalSetTest.class, BookieWriteLedgersWithDifferentDigestsTest.class);
    private static final List<Class<?>> PARAMETERIZED = List.of(
        ExplicitLacTest.class, TestPiggybackLAC.class, TestReadLastConfirmedAndEntry.class,
        TestReadLastConfirmedLongPoll.class);

    /**
     * The classes CI runs (-Dstreamcache.bk.ownTests=ci): several bookies in one JVM with the
     * storage's default sizes, writing, reading back with sticky and parallel reads, deleting,
     * and the last-add-confirmed paths (explicit, piggybacked, long poll), in about three
     * minutes on the loaded 2-core machine; the others run with -Dstreamcache.bk.ownTests=true
     * (docs/bookkeeper.md has the table and the times).
     */
    static final List<String> CI_SUBSET = List.of("BookieStickyReadsTest", "BookieWriteLedgersWithDifferentDigestsTest",
        "LedgerCreateDeleteTest", "ExplicitLacTest", "TestPiggybackLAC", "TestReadLastConfirmedAndEntry",
        "TestReadLastConfirmedLongPoll");

    /**
     * Methods that cannot apply to any storage but the one they were written for, each with why:
     * they are left out of the run and listed in docs/bookkeeper.md.
     */
    private static final java.util.Map<String, String> NOT_APPLICABLE_METHODS = java.util.Map.of(
        "testExplicitLacWriteToFileInfoWithValidVersions", "reads InterleavedLedgerStorage's index files (FileInfo)",
        "testExplicitLacWriteToFileInfoWithOlderVersions", "reads InterleavedLedgerStorage's index files (FileInfo)",
        "testExplicitLacWriteToJournalWithValidVersions", "opens a second bookie on a running bookie's directories",
        "testExplicitLacWriteToJournalWithOlderVersions", "opens a second bookie on a running bookie's directories",
        "testGetListOfEntriesOfLedger", "opens a second bookie on a running bookie's directories");

    private static final Filter NOT_APPLICABLE = new Filter() {
        @Override
        public boolean shouldRun(final Description description) {
            return description.getMethodName() == null || !NOT_APPLICABLE_METHODS.containsKey(description.getMethodName());
        }

        @Override
        public String describe() {
            return "methods that apply to another storage only: " + NOT_APPLICABLE_METHODS;
        }
    };

    @TestFactory
    @Timeout(3600)
    Stream<DynamicTest> shouldPassBookKeepersOwnTestsOnThisStorage() {
        // -Dstreamcache.bk.ownTests=true runs every class, =ci (the build's default) the CI
        // subset, =false none; -Dstreamcache.bk.ownTests.only=Name1,Name2 only those classes.
        final String which = System.getProperty("streamcache.bk.ownTests", "false");
        Assumptions.assumeTrue(which.equals("true") || which.equals("ci"),
            "BookKeeper's own tests run only with -Dstreamcache.bk.ownTests=true (all) or =ci (a subset)");
        final List<String> only = which.equals("ci") ? CI_SUBSET
            : List.of(System.getProperty("streamcache.bk.ownTests.only", "").split(","));
        final java.util.function.Predicate<Class<?>> chosen = c -> only.equals(List.of(""))
            || only.contains(c.getSuperclass().getSimpleName());
        final List<DynamicTest> tests = new ArrayList<>();
        for (final Class<?> c : PLAIN.stream().filter(chosen).toList()) {
            tests.add(DynamicTest.dynamicTest(c.getSuperclass().getSimpleName(),
                () -> check(c, () -> Request.aClass(c).filterWith(NOT_APPLICABLE))));
        }
        for (final Class<?> c : PARAMETERIZED.stream().filter(chosen).toList()) {
            tests.add(DynamicTest.dynamicTest(c.getSuperclass().getSimpleName(), () -> check(c, () -> {
                try {
                    return Request.runner(new BlockJUnit4ClassRunnerWithParameters(
                        new TestWithParameters("[" + storage().getSimpleName() + "]", new TestClass(c), List.of(storage()))));
                } catch (final org.junit.runners.model.InitializationError e) {
                    throw new IllegalStateException("cannot build the runner of " + c.getName(), e);
                }
            })));
        }
        return tests.stream();
    }

    /**
     * How many times a failed test method is run again before it counts as failed: BookKeeper's
     * own build reruns each failed test up to {@code testRetryCount} = 2 times (its root pom's
     * surefire {@code rerunFailingTestsCount}), because several of its tests depend on timing
     * (BookKeeper's flaky-test reports, e.g. {@code BookieStickyReadsTest.stickyReadsWithFailures}).
     * A test that passes only on a rerun is reported as flaky in the log and in the result, never
     * hidden; {@code -Dstreamcache.bk.ownTests.retries=0} runs every test once.
     */
    private static final int RETRIES = Integer.getInteger("streamcache.bk.ownTests.retries", 2);

    private static void check(final Class<?> c, final java.util.function.Supplier<Request> request) {
        final Result result = new JUnitCore().run(request.get());
        final StringBuilder failures = new StringBuilder();
        final StringBuilder flaky = new StringBuilder();
        int failed = 0;
        for (final Failure failure : result.getFailures()) {
            int attempt = 0;
            boolean passed = false;
            while (!passed && attempt < RETRIES) {
                attempt++;
                passed = new JUnitCore().run(request.get().filterWith(Filter.matchMethodDescription(failure.getDescription())))
                    .wasSuccessful();
            }
            if (passed) {
                flaky.append("\n  ").append(failure.getTestHeader()).append(": passed on rerun ").append(attempt)
                    .append(" after: ").append(failure.getMessage());
            } else {
                failed++;
                failures.append("\n  ").append(failure.getTestHeader()).append(": ").append(failure.getMessage());
            }
        }
        LOG.info("BookKeeper's {}: run={} failed={} flaky={} ignored={} in {} ms{}", c.getSuperclass().getSimpleName(),
            result.getRunCount(), failed, result.getFailureCount() - failed, result.getIgnoreCount(), result.getRunTime(), failures);
        if (flaky.length() > 0) {
            LOG.warn("BookKeeper's {}: flaky (failed, then passed on a rerun as BookKeeper's own build reruns it):{}",
                c.getSuperclass().getSimpleName(), flaky);
        }
        final int failedCount = failed;
        assertTrue(failedCount == 0, () -> c.getSuperclass().getSimpleName() + " failed (each after " + RETRIES + " reruns):" + failures);
    }
}
