package io.flywheel.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BiConsumer;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The native libraries of the command's dependencies, unpacked once per user instead of into every run's
 * {@code java.io.tmpdir}. Each library's files are copied out of its jar into
 * {@code CACHE/<jar name without .jar>/} (e.g. {@code ~/.cache/flywheel/native/lance-core-7.0.0/liblance_jni.so}),
 * so a new library version gets a new folder, and its loader is pointed there through its own system property:
 *
 * <ul>
 *   <li>Lance {@code liblance_jni} (lance-core; loaded by jar-jni, which has no setting): {@code flywheel.native.lance_jni},
 *       read by Flywheel's {@code org.lance.JniLoader}, which replaces lance-core's on the command's class path;</li>
 *   <li>ONNX Runtime {@code libonnxruntime} and {@code libonnxruntime4j_jni}: {@code onnxruntime.native.path};</li>
 *   <li>zstd-jni: {@code ZstdNativePath};</li>
 *   <li>snappy-java: {@code org.xerial.snappy.lib.path} and {@code org.xerial.snappy.lib.name};</li>
 *   <li>sqlite-jdbc: {@code org.sqlite.lib.path} and {@code org.sqlite.lib.name}.</li>
 * </ul>
 *
 * <p>A cached file is reused while its size and modification time equal its jar entry's. A missing or different one
 * is written, under an exclusive lock on {@code <folder>/.lock}, into the sibling {@code <file>.part}, forced to disk
 * and renamed over the final name: a process never sees a partial library under the final name, and a second process
 * starting at the same time waits for the lock and then finds the complete file. A property the user already set
 * (e.g. in {@code FLYWHEEL_JAVA_OPTS}) is left as it is. A library whose jar or platform folder is not found, or
 * that cannot be written to the cache, is left to its own loader (which unpacks it per run, as before).
 *
 * <p>OpenCV and FFmpeg are cached by JavaCPP ({@code org.bytedeco.javacpp.cachedir}); Arrow's C data interface
 * (40 KB) and lz4-java (160 KB, deleted as soon as it is loaded) have no setting and still unpack per run.
 */
final class NativeCache {

    /** System property naming the cache root folder; without it {@link #install()} does nothing. */
    static final String CACHE_PROPERTY = "flywheel.native.cache";

    private NativeCache() {
    }

    /**
     * One library as its loader looks for it on this platform.
     *
     * @param ownerClass a class file in the library's jar, e.g. {@code org/lance/Dataset.class}
     * @param folder     the jar folder holding this platform's files, e.g. {@code nativelib/linux-x86-64}
     * @param point      sets the loader's properties from the cache folder and the cached files
     */
    record Library(String ownerClass, String folder, BiConsumer<Path, List<Path>> point) {
    }

    /**
     * Unpacks every library of {@link #libraries()} into the cache named by {@value #CACHE_PROPERTY}, where not there
     * yet, and points its loader at it. Call it before anything loads a native library. Failures are reported on
     * standard error as one line each and leave that library to its loader.
     */
    static void install() {
        String root = System.getProperty(CACHE_PROPERTY);
        if (root == null || root.isBlank()) {
            return;
        }
        for (Library lib : libraries()) {
            try {
                Path jar = jarOf(lib.ownerClass());
                if (jar == null) {
                    continue;
                }
                Path dir = Path.of(root).resolve(jar.getFileName().toString().replaceFirst("\\.jar$", ""));
                List<Path> files = extract(jar, lib.folder(), dir);
                if (!files.isEmpty()) {
                    lib.point().accept(dir, files);
                }
            } catch (IOException | UncheckedIOException | SecurityException e) {
                System.err.println("flywheel: cannot cache " + lib.folder() + " under " + root + " (" + Main.describe(e)
                        + "); it is unpacked for this run only");
            }
        }
    }

    /** @return the libraries for this operating system and architecture (none where it is not Linux or macOS on x86-64 or arm64) */
    static List<Library> libraries() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        boolean linux = os.startsWith("linux");
        boolean mac = os.startsWith("mac");
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        if (!(linux || mac) || !(x64 || arm64)) {
            return List.of();
        }
        String suffix = System.mapLibraryName("x").substring("libx".length());
        return List.of(
                // io.questdb.jar.jni.Platform.RESOURCE_PREFIX
                new Library("org/lance/Dataset.class",
                        "nativelib/" + (linux ? "linux-" : "darwin-") + (x64 ? "x86-64" : "aarch64"),
                        (dir, files) -> files.stream().filter(f -> f.getFileName().toString()
                                        .equals(System.mapLibraryName("lance_jni")))
                                .findFirst().ifPresent(f -> setIfAbsent("flywheel.native.lance_jni", f.toString()))),
                // ai.onnxruntime.OnnxRuntime.initOsArch
                new Library("ai/onnxruntime/OnnxRuntime.class",
                        "ai/onnxruntime/native/" + (linux ? "linux-" : "osx-") + (x64 ? "x64" : "aarch64"),
                        (dir, files) -> {
                            if (files.contains(dir.resolve(System.mapLibraryName("onnxruntime")))
                                    && files.contains(dir.resolve(System.mapLibraryName("onnxruntime4j_jni")))) {
                                setIfAbsent("onnxruntime.native.path", dir.toString());
                            }
                        }),
                // com.github.luben.zstd.util.Native.resourceName: one file, named after the version
                new Library("com/github/luben/zstd/Zstd.class",
                        (linux ? "linux/" + (x64 ? "amd64" : "aarch64") : "darwin/" + (x64 ? "x86_64" : "aarch64")),
                        (dir, files) -> files.stream().filter(f -> f.getFileName().toString().startsWith("libzstd-jni"))
                                .findFirst().ifPresent(f -> setIfAbsent("ZstdNativePath", f.toString()))),
                // org.xerial.snappy.OSInfo.getNativeLibFolderPathForCurrentOS
                new Library("org/xerial/snappy/Snappy.class",
                        "org/xerial/snappy/native/" + (linux ? "Linux/" : "Mac/") + (x64 ? "x86_64" : "aarch64"),
                        (dir, files) -> {
                            String name = "libsnappyjava" + suffix;
                            if (System.getProperty("org.xerial.snappy.lib.path") == null && files.contains(dir.resolve(name))) {
                                System.setProperty("org.xerial.snappy.lib.path", dir.toString());
                                System.setProperty("org.xerial.snappy.lib.name", name);
                            }
                        }),
                // org.sqlite.util.OSInfo.getNativeLibFolderPathForCurrentOS (rosbag2 sqlite3 storage)
                new Library("org/sqlite/JDBC.class",
                        "org/sqlite/native/" + (linux ? "Linux/" : "Mac/") + (x64 ? "x86_64" : "aarch64"),
                        (dir, files) -> {
                            String name = "libsqlitejdbc" + suffix;
                            if (System.getProperty("org.sqlite.lib.path") == null && files.contains(dir.resolve(name))) {
                                System.setProperty("org.sqlite.lib.path", dir.toString());
                                System.setProperty("org.sqlite.lib.name", name);
                            }
                        }));
    }

    /**
     * Copies the native library files directly in {@code folder} of the jar into {@code dir}, each unless it is
     * there already with the entry's size and time.
     *
     * @param jar    the jar file
     * @param folder a folder inside the jar, without a trailing slash
     * @param dir    the cache folder for this jar; created when missing
     * @return the cached files, one per library file in the folder (empty when the folder holds none)
     * @throws IOException when the jar cannot be read or the cache cannot be written
     */
    static List<Path> extract(Path jar, String folder, Path dir) throws IOException {
        String prefix = folder + "/";
        String suffix = System.mapLibraryName("x").substring("libx".length());
        List<Path> out = new ArrayList<>();
        try (JarFile jf = new JarFile(jar.toFile(), false)) {
            List<JarEntry> entries = jf.stream()
                    .filter(e -> !e.isDirectory() && e.getName().startsWith(prefix) && e.getName().endsWith(suffix)
                            && e.getName().indexOf('/', prefix.length()) < 0)
                    .toList();
            for (JarEntry e : entries) {
                Path target = dir.resolve(e.getName().substring(prefix.length()));
                if (!upToDate(target, e)) {
                    Files.createDirectories(dir);
                    try (FileChannel lockFile = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE,
                            StandardOpenOption.WRITE); FileLock lock = lockFile.lock()) {
                        if (!upToDate(target, e)) { // another process may have written it while this one waited
                            write(jf, e, target);
                        }
                    }
                }
                out.add(target);
            }
        }
        return out;
    }

    /** Writes the entry into {@code <target>.part}, forces it to disk and renames it over {@code target}. */
    private static void write(JarFile jf, JarEntry e, Path target) throws IOException {
        Path part = target.resolveSibling(target.getFileName() + ".part");
        try (InputStream in = jf.getInputStream(e);
             FileChannel ch = FileChannel.open(part, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.TRUNCATE_EXISTING)) {
            in.transferTo(Channels.newOutputStream(ch));
            ch.force(true);
        } catch (IOException ex) {
            Files.deleteIfExists(part);
            throw ex;
        }
        Files.setLastModifiedTime(part, FileTime.fromMillis(e.getTime()));
        Files.move(part, target, StandardCopyOption.ATOMIC_MOVE);
    }

    private static boolean upToDate(Path file, JarEntry e) throws IOException {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return a.isRegularFile() && a.size() == e.getSize() && a.lastModifiedTime().toMillis() == e.getTime();
        } catch (NoSuchFileException missing) {
            return false;
        }
    }

    /** @return the jar file holding the class file on the class path, or null when there is none or it is not in a jar */
    static Path jarOf(String classFile) throws IOException {
        URL url = NativeCache.class.getClassLoader().getResource(classFile);
        if (url == null || !"jar".equals(url.getProtocol())) {
            return null;
        }
        URL jarUrl = ((JarURLConnection) url.openConnection()).getJarFileURL();
        if (!"file".equals(jarUrl.getProtocol())) {
            return null;
        }
        try {
            return Path.of(jarUrl.toURI());
        } catch (URISyntaxException e) {
            return null;
        }
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
