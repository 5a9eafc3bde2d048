package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import java.util.zip.CRC32;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The native libraries are unpacked once per user: real JVM processes ({@link Probe}) start with
 * {@code -Dflywheel.native.cache}, load Lance, ONNX Runtime, zstd-jni, snappy-java and sqlite-jdbc, and end with
 * {@link Runtime#halt} (as a {@code kill -9} would: no shutdown hooks, no delete-on-exit). Each cached file has its
 * jar entry's size and CRC-32 (as {@code unzip -v} lists them).
 */
class NativeCacheTest {

    /**
     * The library files of this platform, 6 on Linux and macOS: liblance_jni, libonnxruntime, libonnxruntime4j_jni,
     * libzstd-jni-VERSION, libsnappyjava, libsqlitejdbc.
     */
    private static final int FILES = 6;

    @BeforeAll
    static void supported() {
        assumeFalse(NativeCache.libraries().isEmpty(), "no cached libraries on this platform");
    }

    /**
     * A first start unpacks every library into the cache and loads it from there, leaving no copy in its scratch
     * folder; a second start loads the same files without writing them again (same inode, same time).
     */
    @Test
    void aFirstStartUnpacksOnceAndASecondOneReusesTheFiles(@TempDir Path tmp) throws Exception {
        Path cache = tmp.resolve("native");
        Probe.Run first = Probe.start(tmp.resolve("scratch1"), cache, false);
        String out = first.finish();
        assertTrue(out.contains("loaded"), out);
        for (String p : List.of("flywheel.native.lance_jni", "onnxruntime.native.path", "ZstdNativePath",
                "org.xerial.snappy.lib.path", "org.sqlite.lib.path")) {
            assertTrue(out.contains(p + "=" + cache), p + " points into the cache: " + out);
        }
        Map<Path, JarEntry> files = expected(cache);
        assertEquals(FILES, files.size(), files.keySet().toString());
        assertComplete(files);
        assertEquals(List.of(), libraryCopies(tmp.resolve("scratch1")), "nothing unpacked into the run's scratch folder");

        Map<Path, BasicFileAttributes> before = attributes(files.keySet());
        String again = Probe.start(tmp.resolve("scratch2"), cache, false).finish();
        assertTrue(again.contains("loaded"), again);
        Map<Path, BasicFileAttributes> after = attributes(files.keySet());
        for (Path f : files.keySet()) {
            assertEquals(before.get(f).fileKey(), after.get(f).fileKey(), f + " not replaced");
            assertEquals(before.get(f).lastModifiedTime(), after.get(f).lastModifiedTime(), f + " not rewritten");
        }
        assertEquals(List.of(), libraryCopies(tmp.resolve("scratch2")));
    }

    /**
     * Two processes whose first start is released at the same moment (both wait for a line on their input, which
     * the test writes once both are ready) both load every library, and the cache holds complete files only.
     */
    @Test
    void twoFirstStartsAtOnceBothLoadCompleteLibraries(@TempDir Path tmp) throws Exception {
        Path cache = tmp.resolve("native");
        Probe.Run a = Probe.start(tmp.resolve("a"), cache, true);
        Probe.Run b = Probe.start(tmp.resolve("b"), cache, true);
        a.go();
        b.go();
        String outA = a.finish();
        String outB = b.finish();
        assertTrue(outA.contains("loaded"), outA);
        assertTrue(outB.contains("loaded"), outB);
        Map<Path, JarEntry> files = expected(cache);
        assertEquals(FILES, files.size());
        assertComplete(files);
    }

    /**
     * What a start killed while unpacking leaves (a {@code .part} file, or a short file under the final name, as an
     * older unpacker could) is replaced by a complete file; an up-to-date file is left as it is.
     */
    @Test
    void aKilledUnpackIsRedoneAndACompleteFileIsKept(@TempDir Path tmp) throws IOException {
        NativeCache.Library zstd = NativeCache.libraries().stream()
                .filter(l -> l.ownerClass().startsWith("com/github/luben")).findFirst().orElseThrow();
        Path jar = NativeCache.jarOf(zstd.ownerClass());
        Path dir = Files.createDirectories(tmp.resolve("zstd"));
        Map<Path, JarEntry> expected = expected(List.of(zstd), Map.of(zstd, dir));
        assertEquals(1, expected.size());
        Path file = expected.keySet().iterator().next();
        Files.write(file.resolveSibling(file.getFileName() + ".part"), new byte[1000]);
        Files.write(file, new byte[1000]);

        assertEquals(List.of(file), NativeCache.extract(jar, zstd.folder(), dir));
        assertComplete(expected);

        Object key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        assertEquals(List.of(file), NativeCache.extract(jar, zstd.folder(), dir));
        assertEquals(key, Files.readAttributes(file, BasicFileAttributes.class).fileKey(), "up to date: not replaced");
    }

    /** @return each library file of this platform as the cache under {@code root} should hold it, with its jar entry */
    private static Map<Path, JarEntry> expected(Path root) throws IOException {
        List<NativeCache.Library> libs = NativeCache.libraries();
        Map<NativeCache.Library, Path> dirs = new HashMap<>();
        for (NativeCache.Library l : libs) {
            Path jar = NativeCache.jarOf(l.ownerClass());
            dirs.put(l, root.resolve(jar.getFileName().toString().replaceFirst("\\.jar$", "")));
        }
        return expected(libs, dirs);
    }

    private static Map<Path, JarEntry> expected(List<NativeCache.Library> libs, Map<NativeCache.Library, Path> dirs)
            throws IOException {
        String suffix = System.mapLibraryName("x").substring("libx".length());
        Map<Path, JarEntry> out = new HashMap<>();
        for (NativeCache.Library l : libs) {
            try (JarFile jf = new JarFile(NativeCache.jarOf(l.ownerClass()).toFile())) {
                String prefix = l.folder() + "/";
                jf.stream().filter(e -> e.getName().startsWith(prefix) && e.getName().endsWith(suffix)
                                && e.getName().indexOf('/', prefix.length()) < 0)
                        .forEach(e -> out.put(dirs.get(l).resolve(e.getName().substring(prefix.length())), e));
            }
        }
        return out;
    }

    /** Each file has its entry's size and CRC-32, and no {@code .part} file is left beside it. */
    private static void assertComplete(Map<Path, JarEntry> files) throws IOException {
        for (Map.Entry<Path, JarEntry> f : files.entrySet()) {
            assertEquals(f.getValue().getSize(), Files.size(f.getKey()), f.getKey().toString());
            CRC32 crc = new CRC32();
            try (InputStream in = Files.newInputStream(f.getKey())) {
                byte[] buf = new byte[1 << 20];
                for (int n; (n = in.read(buf)) > 0; ) {
                    crc.update(buf, 0, n);
                }
            }
            assertEquals(f.getValue().getCrc(), crc.getValue(), "CRC-32 of " + f.getKey());
            assertFalse(Files.exists(f.getKey().resolveSibling(f.getKey().getFileName() + ".part")));
        }
    }

    private static Map<Path, BasicFileAttributes> attributes(Iterable<Path> files) throws IOException {
        Map<Path, BasicFileAttributes> out = new HashMap<>();
        for (Path f : files) {
            out.put(f, Files.readAttributes(f, BasicFileAttributes.class));
        }
        return out;
    }

    /** @return the files in a scratch folder that are copies of one of the cached libraries */
    private static List<String> libraryCopies(Path scratch) throws IOException {
        try (Stream<Path> s = Files.walk(scratch)) {
            return s.filter(Files::isRegularFile).map(p -> p.getFileName().toString())
                    .filter(n -> n.matches(".*(lance_jni|onnxruntime|zstd-jni|snappyjava|sqlitejdbc).*")).toList();
        }
    }

    /** A start: installs the cache as {@link Main#main} does, then loads each library and halts. */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            System.out.println("ready");
            System.out.flush();
            if (args.length > 0 && args[0].equals("wait")) {
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            }
            NativeCache.install();
            org.lance.JniLoader.ensureLoaded();
            ai.onnxruntime.OrtEnvironment.getEnvironment().close();
            com.github.luben.zstd.Zstd.compress(new byte[100]);
            org.xerial.snappy.Snappy.compress(new byte[100]);
            try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite::memory:")) {
                c.createStatement().execute("SELECT 1");
            }
            for (String p : List.of("flywheel.native.lance_jni", "onnxruntime.native.path", "ZstdNativePath",
                    "org.xerial.snappy.lib.path", "org.sqlite.lib.path")) {
                System.out.println(p + "=" + System.getProperty(p));
            }
            System.out.println("loaded");
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }

        record Run(Process process, BufferedReader out) {
            void go() throws IOException {
                OutputStream in = process.getOutputStream();
                in.write('\n');
                in.flush();
            }

            String finish() throws Exception {
                StringBuilder s = new StringBuilder();
                for (String line; (line = out.readLine()) != null; ) {
                    s.append(line).append('\n');
                }
                assertEquals(0, process.waitFor(), s.toString());
                return s.toString();
            }
        }

        static Run start(Path scratch, Path cache, boolean waitForGo) throws IOException {
            Files.createDirectories(scratch);
            List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                    "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Djava.io.tmpdir=" + scratch,
                    "-D" + NativeCache.CACHE_PROPERTY + "=" + cache, "-cp", System.getProperty("java.class.path"),
                    Probe.class.getName()));
            if (waitForGo) {
                cmd.add("wait");
            }
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("ready", out.readLine());
            return new Run(p, out);
        }
    }
}
