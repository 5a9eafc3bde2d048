package io.flywheel.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code flywheel init LAKE}: creates an empty lake (raw_files, episodes, frames tables). */
@Command(name = "init", mixinStandardHelpOptions = true,
        description = "Create an empty lake in a local folder or at an s3:// URI. S3 settings come from the options,"
                + " from the file named by FLYWHEEL_CONFIG, or from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,"
                + " AWS_SECRET_ACCESS_KEY and AWS_REGION.")
final class InitCommand implements Callable<Integer> {
    @Mixin
    LakeLocation location;

    @Option(names = "--exist-ok", description = "succeed, changing nothing, when a lake already exists there")
    boolean existOk;

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() {
        String lake = location.uri();
        Lake.Options o = location.options();
        boolean existed = existOk && Lake.exists(lake, o);
        if (!existed) {
            refuseNonEmptyFolder(lake, o);
        }
        try (Lake l = existed ? Lake.open(lake, o) : Lake.init(lake, o)) {
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", l.location());
                m.put("created", !existed);
                m.put("tables", java.util.List.of("raw_files", "episodes", "frames"));
                Json.print(System.out, m);
            } else if (existed) {
                System.out.println("lake " + l.location() + " already exists; left as it is");
            } else {
                System.out.println("created lake " + l.location() + " with tables raw_files, episodes, frames (version 1)");
            }
        }
        return 0;
    }

    /**
     * A lake keeps its tables in a folder of its own: a local folder that holds other files (e.g. the recordings, when
     * {@code init fleet/} was meant as {@code init lake/}) is refused, naming a few of them. Hidden files are ignored;
     * a folder holding a lake is left to {@link Lake#init}, which names the lake.
     */
    private static void refuseNonEmptyFolder(String lake, Lake.Options o) {
        if (lake.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
            return;
        }
        Path dir = Path.of(lake);
        if (!Files.isDirectory(dir) || Lake.exists(lake, o)) {
            return;
        }
        List<String> names = new ArrayList<>();
        try (Stream<Path> entries = Files.list(dir)) {
            entries.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(".")).sorted().forEach(names::add);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        if (!names.isEmpty()) {
            throw new io.flywheel.error.BadInputException("cannot init lake at " + dir + ": the folder is not empty (" + names.size()
                    + " entr" + (names.size() == 1 ? "y" : "ies") + ", e.g. " + String.join(", ", names.subList(0,
                    Math.min(3, names.size()))) + "); a lake needs a folder of its own: give a new or empty one");
        }
    }
}
