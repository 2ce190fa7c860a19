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
import org.junit.runner.Runner;
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

    static void onStreamcache(final ServerConfiguration conf) {
        conf.setLedgerStorageClass(StreamcacheLedgerStorage.class.getName());
        // Several bookies share this JVM's direct memory.
        conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 16L << 20);
        conf.setProperty(StreamcacheStorageSettings.LOG_FILE_BYTES, 8L << 20);
    }

    // ---- BookKeeper's cluster tests, with the storage class set ----

    public static class BookieReadWrite extends org.apache.bookkeeper.test.BookieReadWriteTest {
        public BookieReadWrite() {
            onStreamcache(baseConf);
        }
    }

    public static class BookieFailure extends org.apache.bookkeeper.test.BookieFailureTest {
        public BookieFailure() {
            onStreamcache(baseConf);
        }
    }

    public static class BookKeeperClient extends org.apache.bookkeeper.client.BookKeeperTest {
        public BookKeeperClient() {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerRecovery extends org.apache.bookkeeper.client.LedgerRecoveryTest {
        public LedgerRecovery() {
            onStreamcache(baseConf);
        }
    }

    public static class Fencing extends org.apache.bookkeeper.client.TestFencing {
        public Fencing() {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerClose extends org.apache.bookkeeper.client.LedgerCloseTest {
        public LedgerClose() {
            onStreamcache(baseConf);
        }
    }

    public static class BookieRecovery extends org.apache.bookkeeper.client.BookieRecoveryTest {
        public BookieRecovery() {
            onStreamcache(baseConf);
        }
    }

    public static class LedgerStorageOwn extends org.apache.bookkeeper.bookie.LedgerStorageTest {
        public LedgerStorageOwn() {
            onStreamcache(baseConf);
        }
    }

    // ---- BookKeeper's tests parameterized by storage class, given this one ----

    public static class ExplicitLac extends org.apache.bookkeeper.client.ExplicitLacTest {
        public ExplicitLac(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    public static class PiggybackLac extends org.apache.bookkeeper.client.TestPiggybackLAC {
        public PiggybackLac(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    public static class ReadLastConfirmedAndEntry extends org.apache.bookkeeper.client.TestReadLastConfirmedAndEntry {
        public ReadLastConfirmedAndEntry(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    public static class ReadLastConfirmedLongPoll extends org.apache.bookkeeper.client.TestReadLastConfirmedLongPoll {
        public ReadLastConfirmedLongPoll(final Class<? extends LedgerStorage> storage) {
            super(storage);
            onStreamcache(baseConf);
        }
    }

    private static final List<Class<?>> PLAIN = List.of(BookieReadWrite.class, BookieFailure.class, BookKeeperClient.class,
        LedgerRecovery.class, Fencing.class, LedgerClose.class, BookieRecovery.class, LedgerStorageOwn.class);
    private static final List<Class<?>> PARAMETERIZED = List.of(ExplicitLac.class, PiggybackLac.class,
        ReadLastConfirmedAndEntry.class, ReadLastConfirmedLongPoll.class);

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
        Assumptions.assumeTrue(Boolean.getBoolean("streamcache.bk.ownTests"),
            "BookKeeper's own tests run only with -Dstreamcache.bk.ownTests=true");
        // -Dstreamcache.bk.ownTests.only=Name1,Name2 runs only those of BookKeeper's classes.
        final List<String> only = List.of(System.getProperty("streamcache.bk.ownTests.only", "").split(","));
        final java.util.function.Predicate<Class<?>> chosen = c -> only.equals(List.of(""))
            || only.contains(c.getSuperclass().getSimpleName());
        final List<DynamicTest> tests = new ArrayList<>();
        for (final Class<?> c : PLAIN.stream().filter(chosen).toList()) {
            tests.add(DynamicTest.dynamicTest(c.getSuperclass().getSimpleName(),
                () -> check(c, Request.aClass(c).filterWith(NOT_APPLICABLE))));
        }
        for (final Class<?> c : PARAMETERIZED.stream().filter(chosen).toList()) {
            tests.add(DynamicTest.dynamicTest(c.getSuperclass().getSimpleName(), () -> {
                final Runner runner = new BlockJUnit4ClassRunnerWithParameters(
                    new TestWithParameters("[streamcache]", new TestClass(c), List.of(StreamcacheLedgerStorage.class)));
                check(c, Request.runner(runner));
            }));
        }
        return tests.stream();
    }

    private static void check(final Class<?> c, final Request request) {
        final Result result = new JUnitCore().run(request);
        final StringBuilder failures = new StringBuilder();
        for (final Failure failure : result.getFailures()) {
            failures.append("\n  ").append(failure.getTestHeader()).append(": ").append(failure.getMessage());
        }
        LOG.info("BookKeeper's {}: run={} failed={} ignored={} in {} ms{}", c.getSuperclass().getSimpleName(), result.getRunCount(),
            result.getFailureCount(), result.getIgnoreCount(), result.getRunTime(), failures);
        assertTrue(result.wasSuccessful(), () -> c.getSuperclass().getSimpleName() + " failed:" + failures);
    }
}
