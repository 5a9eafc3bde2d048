package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Flywheel's {@code org.lance.JniLoader} (flywheel-cli) stands in for lance-core's: it is the one the class path
 * resolves, it declares exactly the original's members, and the original still loads {@code lance_jni} from
 * {@code /nativelib} through jar-jni and then calls {@code initLanceLogger}: the only behaviour the stand-in copies.
 * A lance-core upgrade that changes any of this fails here.
 */
class JniLoaderStandInTest {

    @Test
    void standsInForLanceCoresJniLoader() throws Exception {
        Path jar = NativeCache.jarOf("org/lance/Dataset.class");
        assertNotNull(jar, "lance-core on the class path");
        Class<?> ours = Class.forName("org.lance.JniLoader", false, getClass().getClassLoader());
        assertNotEquals(jar, Path.of(ours.getProtectionDomain().getCodeSource().getLocation().toURI()),
                "the class path resolves flywheel-cli's JniLoader, not lance-core's");
        try (URLClassLoader lanceOnly = new URLClassLoader(new URL[] {jar.toUri().toURL()},
                ClassLoader.getPlatformClassLoader())) {
            Class<?> original = Class.forName("org.lance.JniLoader", false, lanceOnly);
            assertEquals(members(original), members(ours));
            assertEquals(original.getModifiers(), ours.getModifiers());
            String bytes;
            try (InputStream in = lanceOnly.getResourceAsStream("org/lance/JniLoader.class")) {
                bytes = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            }
            for (String constant : List.of("/nativelib", "lance_jni", "io/questdb/jar/jni/JarJniLoader", "loadLib",
                    "initLanceLogger", "org/lance/Dataset")) {
                assertTrue(bytes.contains(constant), "lance-core's JniLoader refers to " + constant);
            }
        }
    }

    /** @return "modifiers name(parameters)" of each declared field, constructor and method, sorted */
    private static TreeSet<String> members(Class<?> c) {
        TreeSet<String> out = new TreeSet<>();
        for (Field f : c.getDeclaredFields()) {
            out.add(Modifier.toString(f.getModifiers()) + " " + f.getType().getName() + " " + f.getName());
        }
        Stream.concat(Arrays.stream(c.getDeclaredConstructors()), Arrays.stream(c.getDeclaredMethods()))
                .forEach((Executable e) -> out.add(Modifier.toString(e.getModifiers()) + " "
                        + (e instanceof Constructor<?> ? "<init>" : e.getName())
                        + Arrays.toString(e.getParameterTypes())));
        return out;
    }
}
