package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * flywheel-lake is the only module that speaks Lance and Arrow (docs/ARCHITECTURE.md, issue 15 item 1): no main source
 * file of another module names an {@code org.apache.arrow} or {@code org.lance} type, by import or fully qualified
 * (comments and string literals aside), and no public member of the lake's public classes has one in its signature,
 * so that other modules cannot reach an Arrow or Lance object through the lake either (a lambda needs no import).
 */
class ModuleBoundaryTest {
    /**
     * Main source files outside the lake allowed to name Lance or Arrow types, relative to the repository root, each
     * with why.
     */
    static final Set<String> ALLOWED = Set.of(
            // the loader benchmark measures Lance's own take as the loader's peer
            "flywheel-bench/src/main/java/io/flywheel/bench/LoaderBench.java",
            // the take-layout benchmark writes and takes Lance datasets with lance-core alone, to measure Lance itself
            "flywheel-bench/src/main/java/io/flywheel/bench/TakeLayouts.java",
            // a class-path stand-in for lance-core's own org.lance.JniLoader (native libraries unpacked once per user):
            // it must be that class, in that package
            "flywheel-cli/src/main/java/org/lance/JniLoader.java");

    static final Pattern STORAGE_TYPE = Pattern.compile("\\b(org\\.apache\\.arrow|org\\.lance)\\.[A-Za-z_]");

    @Test
    void noMainSourceOutsideTheLakeNamesALanceOrArrowType() throws IOException {
        Path root = repositoryRoot();
        List<String> modules = modules(root);
        assertTrue(modules.contains("flywheel-lake") && modules.contains("flywheel-curate"), "modules: " + modules);
        List<String> offenders = new ArrayList<>();
        int files = 0;
        for (String module : modules) {
            if (module.equals("flywheel-lake")) {
                continue;
            }
            Path src = root.resolve(module).resolve("src/main/java");
            if (!Files.isDirectory(src)) {
                continue;
            }
            try (Stream<Path> s = Files.walk(src)) {
                for (Path f : s.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    files++;
                    String rel = root.relativize(f).toString().replace('\\', '/');
                    if (ALLOWED.contains(rel)) {
                        continue;
                    }
                    String code = codeOnly(Files.readString(f));
                    Matcher m = STORAGE_TYPE.matcher(code);
                    if (m.find()) {
                        int line = (int) code.substring(0, m.start()).chars().filter(c -> c == '\n').count() + 1;
                        offenders.add(rel + ":" + line + " (" + m.group(1) + ")");
                    }
                }
            }
        }
        assertTrue(files > 100, "scanned " + files + " main source files under " + root);
        assertEquals(List.of(), offenders, "main sources outside flywheel-lake that name a Lance or Arrow type (use the"
                + " lake's RowBatch, ColumnSpec, TypedTable and LakeTransaction instead)");
    }

    @Test
    void theSourceCheckSeesImportsAndQualifiedNamesButNotCommentsOrStrings() {
        assertTrue(STORAGE_TYPE.matcher(codeOnly("import org.apache.arrow.vector.BigIntVector;")).find());
        assertTrue(STORAGE_TYPE.matcher(codeOnly("var v = (org.lance.Dataset) x;")).find());
        assertFalse(STORAGE_TYPE.matcher(codeOnly("/** see {@code org.lance.Dataset} */ int x;")).find());
        assertFalse(STORAGE_TYPE.matcher(codeOnly("// org.apache.arrow.vector\nint x;")).find());
        assertFalse(STORAGE_TYPE.matcher(codeOnly("String s = \"org.lance.JniLoader\";")).find());
        assertFalse(STORAGE_TYPE.matcher(codeOnly("package org.lance;")).find());
    }

    @Test
    void theLakesPublicApiHasNoLanceOrArrowType() throws Exception {
        Path classes = Path.of(LakeTable.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> offenders = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> s = Files.walk(classes.resolve("io/flywheel/lake"))) {
            for (Path f : s.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
                String name = classes.relativize(f).toString().replace('/', '.').replace('\\', '.')
                        .replaceAll("\\.class$", "");
                Class<?> c = Class.forName(name, false, getClass().getClassLoader());
                if (!exported(c)) {
                    continue;
                }
                checked++;
                check(c.getName() + " extends", c.getGenericSuperclass(), offenders);
                for (Type t : c.getGenericInterfaces()) {
                    check(c.getName() + " implements", t, offenders);
                }
                for (Method m : c.getDeclaredMethods()) {
                    if (visible(m.getModifiers()) && !m.isSynthetic()) {
                        String where = c.getName() + "." + m.getName();
                        check(where, m.getGenericReturnType(), offenders);
                        for (Type t : m.getGenericParameterTypes()) {
                            check(where, t, offenders);
                        }
                        for (Type t : m.getGenericExceptionTypes()) {
                            check(where, t, offenders);
                        }
                    }
                }
                for (Constructor<?> k : c.getDeclaredConstructors()) {
                    if (visible(k.getModifiers())) {
                        for (Type t : k.getGenericParameterTypes()) {
                            check(c.getName() + ".<init>", t, offenders);
                        }
                    }
                }
                for (Field fl : c.getDeclaredFields()) {
                    if (visible(fl.getModifiers())) {
                        check(c.getName() + "." + fl.getName(), fl.getGenericType(), offenders);
                    }
                }
            }
        }
        assertTrue(checked > 30, "checked " + checked + " public classes of io.flywheel.lake");
        assertEquals(List.of(), offenders, "public lake API naming a Lance or Arrow type");
    }

    /** @return whether code outside the package can name the class (public, and public all the way out) */
    private static boolean exported(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static void check(String where, Type t, List<String> offenders) {
        if (t != null && STORAGE_TYPE.matcher(t.getTypeName()).find()) {
            offenders.add(where + ": " + t.getTypeName());
        }
    }

    /** @return the source with comments and string and char literals blanked (line breaks kept) */
    static String codeOnly(String src) {
        StringBuilder out = new StringBuilder(src.length());
        int i = 0;
        int n = src.length();
        while (i < n) {
            char c = src.charAt(i);
            if (c == '/' && i + 1 < n && src.charAt(i + 1) == '/') {
                while (i < n && src.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && src.charAt(i + 1) == '*') {
                int end = src.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                src.substring(i, end).chars().filter(x -> x == '\n').forEach(x -> out.append('\n'));
                i = end;
            } else if (src.startsWith("\"\"\"", i)) {
                int end = src.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
                src.substring(i, end).chars().filter(x -> x == '\n').forEach(x -> out.append('\n'));
                out.append("\"\"");
                i = end;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && src.charAt(j) != c && src.charAt(j) != '\n') {
                    j += src.charAt(j) == '\\' ? 2 : 1;
                }
                out.append(c).append(c);
                i = Math.min(n, j + 1);
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** @return the repository root: the folder above this module holding the parent pom */
    static Path repositoryRoot() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            Path pom = p.resolve("pom.xml");
            if (Files.isRegularFile(pom) && Files.readString(pom).contains("<module>flywheel-lake</module>")) {
                return p;
            }
        }
        throw new IllegalStateException("no parent pom listing flywheel-lake above " + dir);
    }

    /** @return the modules the parent pom lists, in order */
    static List<String> modules(Path root) throws IOException {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(root.resolve("pom.xml")));
        while (m.find()) {
            out.add(m.group(1).trim());
        }
        return out;
    }
}
