package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link PmemRegion} on regular files (no PMEM needed): the pool's life cycle, that the buffers
 * are the pool's own mapping, bad input, and the failures at open: no room, llpl missing from
 * the class path, llpl's native library unusable.
 */
class PmemRegionTest {
    private static final int BUFFER = 64 * 1024;

    @TempDir
    Path directory;

    private static byte[] readFile(final Path file, final long position, final int length) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            final ByteBuffer bytes = ByteBuffer.allocate(length);
            while (bytes.hasRemaining() && channel.read(bytes, position + bytes.position()) > 0) {
                continue;
            }
            return bytes.array();
        }
    }

    @Test
    void shouldCreateAPoolOfTheRegionLengthAndDeleteItOnClose() throws IOException {
        final Path file = directory.resolve("region.pool");
        final MemoryRegion region = PmemRegion.factory(file).open(3, BUFFER);
        try {
            assertTrue(Files.isRegularFile(file));
            assertEquals(3L * BUFFER, Files.size(file));
            assertEquals(3, region.bufferCount());
            assertEquals(BUFFER, region.bufferLength());
            assertTrue(region.description().contains("PMEM"), region.description());
            assertTrue(region.description().contains(file.toString()), region.description());
            assertEquals(file, ((PmemRegion)region).path());
            final long[] addresses = new long[3];
            for (int i = 0; i < 3; i++) {
                final ByteBuffer buffer = region.buffer(i);
                assertTrue(buffer.isDirect());
                assertFalse(buffer.isReadOnly());
                assertEquals(0, buffer.position());
                assertEquals(BUFFER, buffer.limit());
                assertEquals(BUFFER, buffer.capacity());
                assertEquals(ByteOrder.nativeOrder(), buffer.order());
                addresses[i] = BufferUtil.address(buffer);
                assertEquals(0, addresses[i] % 4096, "buffers are page-aligned");
                final byte[] contents = new byte[BUFFER];
                buffer.duplicate().get(contents);
                assertArrayEquals(new byte[BUFFER], contents, "buffers start zeroed");
            }
            for (int i = 1; i < 3; i++) {
                assertEquals(BUFFER, addresses[i] - addresses[i - 1], "buffers lie back to back in the pool");
            }
            region.buffer(2).putLong(BUFFER - 8, -1L);
            assertEquals(0L, region.buffer(1).getLong(BUFFER - 8), "a write to one buffer stays in it");
            assertEquals(-1L, region.buffer(2).getLong(BUFFER - 8));
            assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(-1));
            assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(3));
        } finally {
            region.close();
        }
        assertFalse(Files.exists(file), "the pool file is deleted on close");
        region.close();
        assertFalse(Files.exists(file), "close is idempotent");
    }

    /**
     * The buffers must be llpl's mapping of the pool file, not a copy: what the cache writes
     * through them is in the file, at the buffer's offset.
     */
    @Test
    void shouldWriteThroughThePoolMappingIntoTheFile() throws IOException {
        final Path file = directory.resolve("kept.pool");
        final MemoryRegion region = PmemRegion.factory(file, false).open(4, BUFFER);
        final byte[] text = "written through llpl's mapping".getBytes(StandardCharsets.US_ASCII);
        region.buffer(3).duplicate().position(100).put(text);
        region.buffer(0).put(0, (byte)7);
        region.close();
        assertTrue(Files.exists(file), "deleteOnClose=false keeps the file");
        assertEquals(4L * BUFFER, Files.size(file));
        assertArrayEquals(text, readFile(file, 3L * BUFFER + 100, text.length));
        assertEquals(7, readFile(file, 0, 1)[0]);
    }

    @Test
    void shouldReplaceAnExistingFile() throws IOException {
        final Path file = directory.resolve("existing.pool");
        final byte[] junk = new byte[5 * BUFFER];
        Arrays.fill(junk, (byte)0x77);
        Files.write(file, junk);
        final MemoryRegion region = PmemRegion.factory(file).open(2, BUFFER);
        try {
            assertEquals(2L * BUFFER, Files.size(file));
            for (int i = 0; i < 2; i++) {
                final byte[] contents = new byte[BUFFER];
                region.buffer(i).duplicate().get(contents);
                assertArrayEquals(new byte[BUFFER], contents, "old contents do not show through");
            }
        } finally {
            region.close();
        }
        assertFalse(Files.exists(file));
    }

    @Test
    void shouldCreateMissingParentDirectories() {
        final Path file = directory.resolve("a/b/c/region.pool");
        final MemoryRegion region = PmemRegion.factory(file).open(1, BUFFER);
        try {
            assertTrue(Files.isRegularFile(file));
        } finally {
            region.close();
        }
    }

    @Test
    void shouldWorkOnSharedMemory() throws IOException {
        final Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no writable /dev/shm here");
        final Path file = Files.createTempDirectory(shm, "pmem-region-test").resolve("region.pool");
        try {
            final MemoryRegion region = PmemRegion.factory(file).open(2, BUFFER);
            try {
                region.buffer(1).putInt(12, 0x5eed);
                assertEquals(0x5eed, region.buffer(1).getInt(12));
                assertEquals(2L * BUFFER, Files.size(file));
            } finally {
                region.close();
            }
            assertFalse(Files.exists(file));
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(file.getParent());
        }
    }

    @Test
    void shouldRefuseBadGeometryBeforeCreatingAFile() {
        final Path file = directory.resolve("bad.pool");
        final int[][] geometries = {{0, BUFFER}, {-1, BUFFER}, {2, 0}, {2, -BUFFER}, {2, 1000}, {2, 3 * 4096}, {2, Integer.MIN_VALUE}};
        for (final int[] geometry : geometries) {
            final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
                () -> PmemRegion.factory(file).open(geometry[0], geometry[1]), Arrays.toString(geometry));
            final String named = geometry[0] <= 0 ? "bufferCount=" + geometry[0] : "bufferLength=" + geometry[1];
            assertTrue(e.getMessage().contains(named), e.getMessage());
            assertFalse(Files.exists(file), "nothing is created for " + Arrays.toString(geometry));
        }
        assertThrows(NullPointerException.class, () -> PmemRegion.factory(null));
    }

    @Test
    void shouldRefuseAPathThatIsNotARegularFileAndLeaveItAlone() throws IOException {
        final Path taken = Files.createDirectory(directory.resolve("taken.pool"));
        Files.write(taken.resolve("inside"), new byte[] {1});
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> PmemRegion.factory(taken).open(2, BUFFER));
        assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
        assertTrue(Files.isDirectory(taken));
        assertTrue(Files.exists(taken.resolve("inside")));
    }

    @Test
    void shouldFailWithAConfigurationExceptionWhenTheFileCannotBeCreated() throws IOException {
        final Path notADirectory = Files.createFile(directory.resolve("plain-file"));
        final Path file = notADirectory.resolve("region.pool");
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> PmemRegion.factory(file).open(2, BUFFER));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("could not be created"), e.getMessage());
        assertTrue(Files.isRegularFile(notADirectory));

        final CacheConfigurationException built = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder()
            .capacity(2 * BUFFER).bufferLength(BUFFER).registerMBean(false).region(PmemRegion.factory(file))
            .build());
        assertTrue(built.getMessage().contains("could not be created"), built.getMessage());
    }

    /**
     * Asks for more than the file system holds. The region checks the usable space before llpl
     * creates the file (whose allocation would fail too: libpmem allocates it with
     * {@code posix_fallocate}); the timeout bounds the damage should the check ever go.
     */
    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldFailWithAConfigurationExceptionWhenTheFileSystemLacksSpace() throws IOException {
        final long usable = Files.getFileStore(directory).getUsableSpace();
        final int buffer = BlockCache.Builder.BUFFER_LENGTH_DEFAULT;
        final long count = usable / buffer + 1024;
        assumeTrue(count < Integer.MAX_VALUE, "the file system is too large to exceed with one region");
        final Path file = directory.resolve("huge.pool");
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> PmemRegion.factory(file).open((int)count, buffer));
        assertTrue(e.getMessage().contains("usable"), e.getMessage());
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertFalse(Files.exists(file), "a failed open leaves no file behind");
    }

    @Test
    void shouldWrapForeignNativeMemoryAndRefuseBadInput() {
        final ByteBuffer owner = ByteBuffer.allocateDirect(3 * 4096);
        try {
            final long address = BufferUtil.address(owner) + 4096;
            final ByteBuffer wrapped = Regions.wrap(address, 4096);
            assertEquals(address, BufferUtil.address(wrapped));
            assertEquals(4096, wrapped.capacity());
            assertEquals(ByteOrder.nativeOrder(), wrapped.order());
            wrapped.putLong(8, 0x0123456789abcdefL);
            assertEquals(0x0123456789abcdefL, owner.order(ByteOrder.nativeOrder()).getLong(4096 + 8));
            owner.put(4096 + 4095, (byte)99);
            assertEquals(99, wrapped.get(4095));
            assertThrows(IndexOutOfBoundsException.class, () -> wrapped.get(4096), "the capacity bounds the buffer");
            final ByteBuffer slice = wrapped.duplicate().position(4000).slice();
            assertEquals(address + 4000, BufferUtil.address(slice));
        } finally {
            BufferUtil.free(owner);
        }
        assertThrows(IllegalArgumentException.class, () -> Regions.wrap(0, 4096));
        assertThrows(IllegalArgumentException.class, () -> Regions.wrap(4096, 0));
        assertThrows(IllegalArgumentException.class, () -> Regions.wrap(4096, -1));
    }

    // ------------------------------------------------------------------------------------------
    // Without llpl: the jar missing from the class path, its native library unusable
    // ------------------------------------------------------------------------------------------

    private static Path codeSource(final Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (final URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @return where cache-core's classes and its mandatory dependencies are, without llpl.
     */
    private static List<Path> classPathWithoutLlpl() {
        final List<Path> path = new ArrayList<>();
        for (final Class<?> type : List.of(PmemRegion.class, org.agrona.BufferUtil.class, org.slf4j.LoggerFactory.class,
            io.netty.buffer.ByteBuf.class, io.netty.util.ReferenceCounted.class, org.jctools.queues.MpmcArrayQueue.class)) {
            final Path location = codeSource(type);
            if (!path.contains(location)) {
                path.add(location);
            }
        }
        return path;
    }

    private static Path llplJar() throws ClassNotFoundException {
        return codeSource(Class.forName("com.intel.pmem.llpl.MemoryPool", false, PmemRegionTest.class.getClassLoader()));
    }

    /**
     * In a child JVM whose class path has cache-core but not llpl (a broker that did not add the
     * optional dependency): a cache in direct memory builds and closes (no other class touches
     * llpl), and opening a PMEM region fails with a configuration exception that names the
     * artifact to add, creating no file. A child JVM, because with the module in this JVM's boot
     * layer every built-in class loader finds llpl's classes, whatever its class path.
     */
    @Test
    @Timeout(60)
    void shouldNameTheArtifactToAddWhenLlplIsNotOnTheClassPath() throws Exception {
        final List<Path> path = new ArrayList<>(classPathWithoutLlpl());
        assertFalse(path.contains(llplJar()), "llpl must not be on the isolated class path: " + path);
        path.add(codeSource(NoLlplProbe.class));
        final StringBuilder classPath = new StringBuilder();
        for (final Path p : path) {
            classPath.append(classPath.length() == 0 ? "" : java.io.File.pathSeparator).append(p);
        }
        final Path file = directory.resolve("no-llpl.pool");
        final Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", classPath.toString(), NoLlplProbe.class.getName(), file.toString()).redirectErrorStream(true).start();
        final String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(50, TimeUnit.SECONDS), out);
        assertEquals(0, child.exitValue(), out);
        assertTrue(out.contains("llpl absent"), out);
        assertTrue(out.contains("direct cache built"), out);
        assertTrue(out.contains("exception=" + CacheConfigurationException.class.getName()), out);
        assertTrue(out.contains(PmemRegion.LLPL_ARTIFACT), out);
        assertTrue(out.contains("class path"), out);
        assertFalse(Files.exists(file), "no file is created without llpl");
    }

    /** Runs in the child JVM of {@link #shouldNameTheArtifactToAddWhenLlplIsNotOnTheClassPath}. */
    static final class NoLlplProbe {
        private NoLlplProbe() {
        }

        public static void main(final String[] args) throws Exception {
            try {
                Class.forName("com.intel.pmem.llpl.MemoryPool");
                System.out.println("llpl present");
                System.exit(2);
            } catch (final ClassNotFoundException expected) {
                System.out.println("llpl absent");
            }
            try (BlockCache cache = BlockCache.builder().registerMBean(false).capacity(4L << 20).build()) {
                if (cache.regionDescription().contains("direct")) {
                    System.out.println("direct cache built");
                }
            }
            try {
                PmemRegion.factory(Path.of(args[0])).open(2, BUFFER);
                System.out.println("opened without llpl");
            } catch (final RuntimeException e) {
                System.out.println("exception=" + e.getClass().getName() + " message=" + e.getMessage());
            }
        }
    }

    /**
     * A child JVM whose dynamic linker finds an unusable {@code libpmemobj.so.1} first (an empty
     * file in a directory on {@code LD_LIBRARY_PATH}), so that llpl's {@code libllpl.so} fails
     * to link exactly as it does where Debian's package is missing. Both the first failure and
     * the later ones must say what to install, and change nothing (an existing file at the path
     * would be replaced by an open that succeeds).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldSayWhatToInstallWhenTheNativeLibraryCannotBeLoaded() throws Exception {
        final Path shadow = Files.createDirectory(directory.resolve("shadow-libs"));
        Files.createFile(shadow.resolve("libpmemobj.so.1"));
        final List<Path> path = classPathWithoutLlpl();
        path.add(llplJar());
        path.add(codeSource(PmemRegionNativeProbe.class));
        final StringBuilder classPath = new StringBuilder();
        for (final Path entry : path) {
            classPath.append(classPath.length() == 0 ? "" : java.io.File.pathSeparator).append(entry);
        }
        final Path file = directory.resolve("no-native.pool");
        final byte[] kept = "an existing file, left alone".getBytes(StandardCharsets.US_ASCII);
        Files.write(file, kept);
        final ProcessBuilder child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", classPath.toString(), "-Djava.io.tmpdir=" + directory, PmemRegionNativeProbe.class.getName(), file.toString())
            .redirectErrorStream(true);
        child.environment().put("LD_LIBRARY_PATH", shadow.toString());
        final Process process = child.start();
        final String output;
        try {
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the child JVM exits");
        } finally {
            process.destroyForcibly();
        }
        assertEquals(0, process.exitValue(), output);
        final List<String> attempts = new ArrayList<>();
        for (final String line : output.split("\n")) {
            if (line.startsWith("1\t") || line.startsWith("2\t")) {
                attempts.add(line);
            }
        }
        assertEquals(2, attempts.size(), output);
        for (final String attempt : attempts) {
            final String[] fields = attempt.split("\t", 3);
            assertEquals(3, fields.length, attempt);
            assertEquals(CacheConfigurationException.class.getName(), fields[1], attempt);
            assertTrue(fields[2].contains(PmemRegion.INSTALL_COMMAND), attempt);
            assertTrue(fields[2].contains("libpmemobj.so.1"), "the linker's own words are kept: " + attempt);
        }
        assertArrayEquals(kept, Files.readAllBytes(file), "a failed open changes nothing: the file at the path is kept");
    }
}
