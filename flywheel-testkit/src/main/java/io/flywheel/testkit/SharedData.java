package io.flywheel.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Locates the real test inputs that live beside the repository as {@code ../shared/data}.
 *
 * <p>Resolution order: the environment variable {@code FLYWHEEL_SHARED} (a path to the
 * {@code shared} folder), else {@code <repository root>/../shared}. The repository root comes from
 * {@code FLYWHEEL_ROOT} (set by the build), else the nearest parent of the working directory that
 * holds {@code .git} or the parent {@code pom.xml}.
 *
 * <p>When a file is missing the test is skipped with a message, except when {@code CI=true}: there
 * the shared data is always present, so a missing file fails the test.
 */
public final class SharedData {
    private SharedData() {}

    /** @return true when running under CI, where missing inputs are failures, never skips */
    public static boolean isCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** @return the repository root directory */
    public static Path repoRoot() {
        String env = System.getenv("FLYWHEEL_ROOT");
        if (env != null && !env.isBlank() && Files.isDirectory(Paths.get(env))) {
            return Paths.get(env).toAbsolutePath().normalize();
        }
        Path dir = Paths.get("").toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.exists(p.resolve(".git")) || Files.exists(p.resolve("flywheel"))
                    && Files.exists(p.resolve("pom.xml"))) {
                return p;
            }
        }
        return dir;
    }

    /** @return the {@code shared} folder, whether or not it exists */
    public static Path sharedRoot() {
        String env = System.getenv("FLYWHEEL_SHARED");
        if (env != null && !env.isBlank()) {
            return Paths.get(env).toAbsolutePath().normalize();
        }
        return repoRoot().resolve("../shared").normalize();
    }

    /**
     * Resolves a path below {@code shared/data}; skips the calling test when it is missing (fails
     * under CI).
     *
     * @param relative path below {@code shared/data}, e.g. {@code "mcap-conformance"}
     * @return the existing path
     */
    public static Path data(String relative) {
        return require(sharedRoot().resolve("data").resolve(relative));
    }

    /** Same as {@link #data(String)} for paths below {@code shared/} (models, tools). */
    public static Path shared(String relative) {
        return require(sharedRoot().resolve(relative));
    }

    private static Path require(Path p) {
        if (!Files.exists(p)) {
            String msg = "shared test input missing: " + p
                    + " (set FLYWHEEL_SHARED to the shared folder)";
            if (isCi()) {
                Assertions.fail(msg + "; CI=true, so this is a failure");
            }
            Assumptions.abort(msg);
        }
        return p;
    }
}
