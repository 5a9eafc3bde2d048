package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.lake.Lake;
import io.flywheel.serve.export.LeRobotExportOptions;
import io.flywheel.serve.export.LeRobotExportResult;
import io.flywheel.serve.export.LeRobotExporter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code flywheel export lerobot LAKE TAG OUT}: a training set as a LeRobotDataset v3.0 folder; {@code flywheel export
 * iceberg LAKE TAG --warehouse DIR}: as Iceberg tables.
 */
@Command(name = "export", mixinStandardHelpOptions = true, description = "Export a training set to another format.",
        subcommands = {ExportCommand.LeRobot.class, ExportCommand.Iceberg.class})
final class ExportCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
    }

    @Command(name = "lerobot", mixinStandardHelpOptions = true,
            description = "Write a LeRobotDataset v3.0 folder (meta/info.json, stats.json, tasks.parquet, episodes, data"
                    + " Parquet, one H.264 MP4 per camera with the episodes concatenated). Images with an odd width or"
                    + " height are padded by repeating the last column/row (an odd --resolution is refused); a camera"
                    + " whose image size changes is refused.")
    static final class LeRobot implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        LakeLocation lake;

        @Parameters(index = "1", paramLabel = "TAG", description = "training-set tag")
        String tag;

        @Parameters(index = "2", paramLabel = "OUT", description = "dataset folder to create")
        Path out;

        @Option(names = "--force", description = "replace OUT when it is empty or an earlier export")
        boolean force;

        @Option(names = "--fps", defaultValue = "0",
                description = "frames per second (default: the set's training rate, else from its timestamps)")
        int fps;

        @Option(names = "--robot-type", description = "robot_type in info.json (default: the episodes' common robot id)")
        String robotType;

        @Option(names = "--keyframe-interval", defaultValue = "0", description = "frames between video keyframes"
                + " (default: half a second of frames, fps / 2; LeRobot's own encoder uses 2: faster random access,"
                + " larger files)")
        int keyframeInterval;

        @Option(names = "--resample", description = "place each sample on the fps grid by its recorded time: a dropped"
                + " frame's slot holds the previous frame, marked flywheel.filled = 1 (without it, a set with dropped"
                + " frames is refused: numbering its frames would put every later frame early)")
        boolean resample;

        @Option(names = "--resolution", paramLabel = "native|hot|WxH", defaultValue = "native",
                description = "video size: each camera's own, decoded from the raw images (default; video sources use"
                        + " the hot copies), the hot copies enrich wrote, or WIDTHxHEIGHT for every camera")
        String resolution;

        @Option(names = "--missing-camera", paramLabel = "leave-out|fill", defaultValue = "leave-out",
                description = "an episode whose cameras are not the set's most common set: left out and named"
                        + " (default), or kept with black frames for a camera it lacks (fill: every camera any episode"
                        + " has is exported)")
        String missingCamera;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() throws IOException {
            boolean json = jsonOutput.enabled();
            Usage.atLeast(spec, "--fps", fps, 0);
            Usage.atLeast(spec, "--keyframe-interval", keyframeInterval, 0);
            Usage.require(spec, missingCamera.equals("leave-out") || missingCamera.equals("fill"),
                    "--missing-camera must be leave-out or fill, got '" + missingCamera + "'");
            LeRobotExportOptions o = Usage.check(spec, null, () -> LeRobotExportOptions.builder().force(force).fps(fps)
                    .robotType(robotType).keyframeInterval(keyframeInterval).resample(resample)
                    .fillMissingCameras(missingCamera.equals("fill")).resolution(resolution.equals("native") ? null : resolution).build());
            LeRobotExportResult r;
            try (Lake l = lake.open()) {
                r = LeRobotExporter.export(l, tag, out, o, line -> {
                    if (!json) {
                        System.err.println(line);
                    }
                });
            }
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("out", r.out().toString());
                m.put("tag", r.tag());
                m.put("codebase_version", LeRobotExporter.CODEBASE_VERSION);
                m.put("fps", r.fps());
                m.put("episodes", r.episodes());
                m.put("frames", r.frames());
                m.put("tasks", r.tasks());
                m.put("cameras", r.cameras().stream().map(c -> Map.of("key", c.key(), "topic", c.topic(), "width", c.width(),
                        "height", c.height(), "padded", c.padded())).toList());
                m.put("encoder", r.encoder());
                m.put("data_files", r.dataFiles());
                m.put("video_files", r.videoFiles());
                m.put("bytes", r.bytes());
                m.put("seconds", r.seconds());
                m.put("filled_images", r.filledImages());
                m.put("filled_vectors", r.filledVectors());
                m.put("left_out_episodes", r.leftOut());
                m.put("resampled", resample);
                m.put("filled_slots", r.filledSlots());
                m.put("merged_samples", r.mergedSamples());
                m.put("black_images", r.blackImages());
                Json.print(System.out, m);
            } else {
                System.out.printf(Locale.ROOT, "exported '%s' to %s: LeRobotDataset v3.0, %d episodes, %d frames at %d fps,"
                                + " %d task(s), %s, %d data file(s), %d video file(s), %.1f MB in %.1f s%n",
                        r.tag(), r.out(), r.episodes(), r.frames(), r.fps(), r.tasks(), r.cameras().isEmpty() ? "no camera"
                                : r.cameras().size() + " camera(s) (" + r.encoder() + ")",
                        r.dataFiles(), r.videoFiles(), r.bytes() / 1e6, r.seconds());
                if (r.filledImages() > 0) {
                    System.out.printf(Locale.ROOT, "  %d camera image(s) missing after alignment were filled with the"
                            + " camera's previous image%n", r.filledImages());
                }
                if (r.filledVectors() > 0) {
                    System.out.printf(Locale.ROOT, "  %d state/action value(s) missing after alignment were held from the"
                            + " episode's neighbouring sample%n", r.filledVectors());
                }
                if (r.filledSlots() > 0 || r.mergedSamples() > 0) {
                    System.out.printf(Locale.ROOT, "  resampled on the %d fps grid: %d slot(s) of dropped frames hold the"
                            + " previous frame (flywheel.filled = 1), %d sample(s) shared a slot with an earlier one and"
                            + " were not exported%n", r.fps(), r.filledSlots(), r.mergedSamples());
                }
                if (r.blackImages() > 0) {
                    System.out.printf(Locale.ROOT, "  %d black frame(s) for cameras episodes do not have"
                            + " (--missing-camera fill)%n", r.blackImages());
                }
                if (!r.leftOut().isEmpty()) {
                    System.out.printf(Locale.ROOT, "  %d episode(s) of the set left out: their state/action shape or"
                            + " their cameras are not the most common ones (a LeRobot dataset has one of each), or"
                            + " their first samples have no state or action: %s%n", r.leftOut().size(),
                            String.join(", ", r.leftOut()));
                }
            }
            return 0;
        }
    }

    @Command(name = "iceberg", mixinStandardHelpOptions = true,
            description = "Write a training set as two Apache Iceberg tables, NAMESPACE.samples and NAMESPACE.episodes"
                    + " (format v2, Parquet), in a JDBC catalog (SQLite by default): one snapshot per training-set tag,"
                    + " tagged with it, holding exactly that set's rows, so that Spark, Trino, StarRocks or Doris read"
                    + " it with FOR VERSION AS OF 'TAG'. Exporting a tag again is a no-op; images stay in the raw files"
                    + " (the samples name their byte ranges).")
    static final class Iceberg implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        LakeLocation lake;

        @Parameters(index = "1", paramLabel = "TAG", description = "training-set tag")
        String tag;

        @Option(names = "--warehouse", paramLabel = "DIR", required = true,
                description = "folder for the tables' metadata and Parquet files (created when missing)")
        Path warehouse;

        @Option(names = "--catalog", paramLabel = "JDBC_URI",
                description = "the catalog's JDBC URI (default: jdbc:sqlite:WAREHOUSE/catalog.db)")
        String catalog;

        @Option(names = "--namespace", paramLabel = "NS", defaultValue = "flywheel",
                description = "catalog namespace of the two tables (default: ${DEFAULT-VALUE})")
        String namespace;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() throws IOException {
            boolean json = jsonOutput.enabled();
            Usage.require(spec, catalog == null || catalog.startsWith("jdbc:"), "--catalog '" + catalog
                    + "': expected a JDBC URI (jdbc:sqlite:FILE, jdbc:postgresql://...)");
            Usage.require(spec, namespace.matches("[A-Za-z_][A-Za-z0-9_]*"), "--namespace '" + namespace
                    + "': expected letters, digits and '_'");
            io.flywheel.iceberg.IcebergExport.Options o = new io.flywheel.iceberg.IcebergExport.Options(catalog,
                    warehouse, namespace, null);
            io.flywheel.iceberg.IcebergExport.Result r;
            try (Lake l = lake.open()) {
                r = io.flywheel.iceberg.IcebergExport.export(l, tag, o, line -> {
                    if (!json) {
                        System.err.println(line);
                    }
                });
            }
            Map<String, java.util.List<String>> tags = io.flywheel.iceberg.IcebergExport.tags(o);
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("tag", r.tag());
                m.put("catalog", r.catalogUri());
                m.put("warehouse", r.warehouse().toAbsolutePath().toString());
                m.put("already_exported", r.alreadyExported());
                m.put("tables", r.tables().stream().map(t -> {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("table", t.table());
                    x.put("snapshot_id", t.snapshotId());
                    x.put("rows", t.rows());
                    x.put("data_files", t.dataFiles());
                    x.put("bytes", t.bytes());
                    x.put("written", t.written());
                    return x;
                }).toList());
                m.put("tags", tags);
                m.put("seconds", r.seconds());
                Json.print(System.out, m);
            } else {
                for (io.flywheel.iceberg.IcebergExport.TableResult t : r.tables()) {
                    System.out.printf(Locale.ROOT, "%s: %s snapshot %d, %d rows%s%n", t.table(),
                            t.written() ? "wrote" : "already holds", t.snapshotId(), t.rows(), t.written()
                                    ? String.format(Locale.ROOT, " in %d Parquet file(s), %.1f MB", t.dataFiles(),
                                    t.bytes() / 1e6) : "");
                }
                System.out.printf(Locale.ROOT, "'%s' is Iceberg tag '%s' of %s.samples and %s.episodes in %s (%.1f s);"
                        + " the catalog holds %s%n", r.tag(), r.tag(), namespace, namespace, r.catalogUri(), r.seconds(),
                        tags.getOrDefault(namespace + ".samples", java.util.List.of()));
            }
            return 0;
        }
    }
}
