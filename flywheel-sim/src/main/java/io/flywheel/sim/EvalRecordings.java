package io.flywheel.sim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.flywheel.sim.eval.EvalRollouts;

/**
 * Evaluation rollouts recorded as MCAP episodes ({@code flywheel sim --eval POLICY --mcap}): one small ROS 2 MCAP file
 * per rollout, written like a fleet episode ({@link EpisodeGenerator}, {@link McapEpisodeSink}: three cameras, joint
 * states, commands) plus one Metadata record named {@link EvalRollouts#METADATA_NAME} with the rollout's outcome
 * ({@link EvalRollouts#metadata}), so that {@code flywheel eval ingest LAKE DIR} ingests each as an episode and links
 * its eval row to it.
 *
 * <p>Kept small: each recording is {@link #RECORDED_SECONDS} s at {@link #WIDTH}x{@link #HEIGHT} (the rollout's own
 * duration is the metadata's {@code duration_s}); no dropped messages or frames. The picture follows the cell: the
 * object (bowl drawn as a cardboard box, cup as a red mug, glass cup and sponge as themselves) and the lighting
 * (bright as daylight, dim, backlit) on the tabletop scene. Everything follows from the rollout and the seed.
 */
public final class EvalRecordings {
    private EvalRecordings() {}

    /** Length of each recording, seconds. */
    public static final double RECORDED_SECONDS = 1.0;
    public static final int WIDTH = 64;
    public static final int HEIGHT = 48;

    private static final long EPOCH_NS = 1_767_225_600_000_000_000L; // 2026-01-01T00:00:00Z

    /**
     * Writes one MCAP per rollout as {@code dir/<robot>/<episode_id>.mcap}.
     *
     * @param r the rollouts
     * @param dir the output folder (created)
     * @param jpeg the JPEG encoder
     * @return the files written, in rollout order
     * @throws IOException when a file cannot be written (the file being written does not appear)
     */
    public static List<Path> write(EvalRollouts.Result r, Path dir, JpegEncoder.Kind jpeg) throws IOException {
        return write(r, dir, jpeg, n -> { });
    }

    /**
     * {@link #write(EvalRollouts.Result, Path, JpegEncoder.Kind)}, telling {@code progress} the number of files
     * written after each.
     */
    public static List<Path> write(EvalRollouts.Result r, Path dir, JpegEncoder.Kind jpeg,
            java.util.function.IntConsumer progress) throws IOException {
        SimOptions options = SimOptions.builder(Preset.TINY).seed(r.options().seed()).resolution(WIDTH, HEIGHT)
                .episodeSeconds(RECORDED_SECONDS).messageDropRate(0).frameDropRate(0).jpegEncoder(jpeg).build();
        Map<String, Long> offsets = new java.util.LinkedHashMap<>();
        FleetPlan.DEVICES.forEach(d -> offsets.put(d, 0L));
        Catalog.Scene scene = Catalog.SCENES.stream().filter(s -> s.name().equals("tabletop")).findFirst()
                .orElseThrow();
        List<Path> out = new ArrayList<>();
        long duration = Math.round(RECORDED_SECONDS * 1e9);
        try (EpisodeGenerator gen = new EpisodeGenerator(options)) {
            int i = 0;
            for (EvalRollouts.Rollout x : r.rollouts()) {
                EvalRollouts.Cell c = x.cell();
                long start = EPOCH_NS + i * 60_000_000_000L;
                EpisodeSpec spec = new EpisodeSpec(i, x.episodeId(), c.robot(), scene, lighting(c.lighting()),
                        Catalog.OPERATORS.get(0), object(c.object()), c.task(), x.success() ? "success" : "failure",
                        x.success() ? null : x.failureMode(), start, duration, -1,
                        r.options().seed() * 1_000_003L + i, r.options().seed() * 7_919L + 31L * i, offsets);
                Path file = dir.resolve(c.robot()).resolve(x.episodeId() + ".mcap");
                Files.createDirectories(file.getParent());
                McapEpisodeSink sink = McapEpisodeSink.open(file, options);
                boolean ok = false;
                try {
                    gen.generate(spec, sink);
                    sink.writeMetadata(EvalRollouts.METADATA_NAME, EvalRollouts.metadata(r, x));
                    sink.close();
                    ok = true;
                } finally {
                    if (!ok) {
                        sink.abort();
                    }
                }
                out.add(file);
                i++;
                progress.accept(i);
            }
        }
        return out;
    }

    private static Catalog.Lighting lighting(String name) {
        String n = name.equals("bright") ? "daylight" : name;
        return Catalog.LIGHTINGS.stream().filter(l -> l.name().equals(n)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no lighting " + name));
    }

    private static Catalog.ObjectKind object(String name) {
        if (name.equals("glass_cup")) {
            return Catalog.GLASS_CUP;
        }
        String n = switch (name) {
            case "bowl" -> "cardboard_box";
            case "cup" -> "red_mug";
            default -> name;
        };
        return Catalog.OPAQUE.stream().filter(o -> o.name().equals(n)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no object " + name));
    }
}
