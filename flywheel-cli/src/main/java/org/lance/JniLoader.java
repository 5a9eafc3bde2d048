package org.lance;

import io.questdb.jar.jni.JarJniLoader;

/**
 * Flywheel's stand-in for lance-core's {@code org.lance.JniLoader} (lance-core 7.0.0): it comes first on the
 * command's class path (the launcher's {@code -cp flywheel-cli.jar:lib/*}, Maven's {@code target/classes}), so the
 * JVM loads it instead of the original. lance-core's loads {@code liblance_jni} through jar-jni, which copies the
 * 181 MB library into {@code java.io.tmpdir} on every run and offers no setting to load it from elsewhere; this one
 * loads it from the file named by the system property {@code flywheel.native.lance_jni} (the per-user native cache
 * that {@code io.flywheel.cli.NativeCache} fills and names) and, without that property, does what the original does.
 *
 * <p>It declares the same members as the original, which Lance's classes call ({@link #ensureLoaded()}) or its
 * library implements ({@code initLanceLogger}); {@code JniLoaderStandInTest} checks them against the lance-core jar,
 * so an upgrade that changes the original fails the build instead of running a stale copy.
 */
public class JniLoader {
    static {
        String path = System.getProperty("flywheel.native.lance_jni");
        if (path != null) {
            System.load(path);
        } else {
            JarJniLoader.loadLib(Dataset.class, "/nativelib", "lance_jni");
        }
        initLanceLogger();
    }

    private JniLoader() {
    }

    /** Loads the native library, once; Lance's classes call it from their static initialisers. */
    public static void ensureLoaded() {
    }

    static native void initLanceLogger();
}
