package io.streamcache.core;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StreamcacheThreadsTest {
    @Test
    void shouldMakeUnstartedDaemonThreadsNamedByRoleAndOwner() {
        final Thread writer = StreamcacheThreads.defaults().newThread(StreamcacheThreads.Role.LOG_WRITER, "orders", () -> { });
        assertEquals("streamcache-log-writer-orders", writer.getName());
        assertTrue(writer.isDaemon());
        assertEquals(Thread.State.NEW, writer.getState(), "not started");
        final Thread reader1 = StreamcacheThreads.defaults().newThread(StreamcacheThreads.Role.LOG_READER, "orders", () -> { });
        final Thread reader2 = StreamcacheThreads.defaults().newThread(StreamcacheThreads.Role.LOG_READER, "orders", () -> { });
        assertTrue(reader1.getName().startsWith("streamcache-log-reader-orders-"), reader1.getName());
        assertFalse(reader1.getName().equals(reader2.getName()), "readers are numbered");
    }

    @Test
    void shouldTakeOneRolesThreadsFromTheGivenFactoryAndTheRestFromTheBase() throws Exception {
        final AtomicInteger made = new AtomicInteger();
        final StreamcacheThreads threads = StreamcacheThreads.defaults().withFactory(StreamcacheThreads.Role.CACHE_MANAGER, task -> {
            made.incrementAndGet();
            return new Thread(task, "broker-evictor");
        });
        final AtomicInteger ran = new AtomicInteger();
        final Thread manager = threads.newThread(StreamcacheThreads.Role.CACHE_MANAGER, "m", ran::incrementAndGet);
        assertEquals("broker-evictor", manager.getName());
        manager.start();
        manager.join();
        assertEquals(1, ran.get(), "the task runs on the factory's thread");
        assertEquals("streamcache-compactor-s", threads.newThread(StreamcacheThreads.Role.COMPACTOR, "s", () -> { }).getName());
        assertEquals("broker-evictor", threads.factory(StreamcacheThreads.Role.CACHE_MANAGER, "m").newThread(() -> { }).getName());
        assertEquals(2, made.get());
    }

    @Test
    void shouldRejectNullsAndAFactoryThatReturnsNull() {
        assertThrows(NullPointerException.class, () -> StreamcacheThreads.defaults().withFactory(null, Thread::new));
        assertThrows(NullPointerException.class, () -> StreamcacheThreads.defaults().withFactory(StreamcacheThreads.Role.LOG_FILES, null));
        final StreamcacheThreads broken = StreamcacheThreads.defaults().withFactory(StreamcacheThreads.Role.LOG_FILES, task -> null);
        final NullPointerException e = assertThrows(NullPointerException.class,
            () -> broken.newThread(StreamcacheThreads.Role.LOG_FILES, "x", () -> { }));
        assertTrue(e.getMessage().contains("role=LOG_FILES"), e.getMessage());
    }
}
