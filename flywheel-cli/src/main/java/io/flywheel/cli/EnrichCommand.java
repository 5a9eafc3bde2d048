package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.flywheel.enrich.Embedder;
import io.flywheel.enrich.model.BuiltinModel;
import io.flywheel.enrich.model.ModelCache;
import io.flywheel.enrich.model.NsfwjsPackage;
import io.flywheel.enrich.model.OnnxEmbedder;
import io.flywheel.enrich.model.Preprocessing;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.Stride;
import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flywheel enrich LAKE}: decode every camera image of the episodes not yet enriched and add sharpness,
 * blurry, static, pHash, size, hot JPEG (and embeddings, with a model) per camera and gripper state and phase per
 * frame, as new versions of frames and episodes. Resumable: a killed run is continued by running it again.
 */
@Command(name = "enrich", mixinStandardHelpOptions = true,
        description = "Add image metrics, pHash, hot JPEG copies, gripper state and phase to frames (new table versions);"
                + " episodes already enriched are skipped, so a killed run resumes.")
final class EnrichCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    LakeLocation location;

    @Option(names = "--stride", paramLabel = "K|keyframes", defaultValue = "5",
            description = "frames to embed: every K-th plus phase changes, or keyframes only (default ${DEFAULT-VALUE})")
    String stride;

    @Option(names = "--threads", paramLabel = "N", description = "decode threads (default: every core)")
    Integer threads;

    @Option(names = "--batch-episodes", paramLabel = "N", defaultValue = "16",
            description = "episodes per commit (default ${DEFAULT-VALUE})")
    int batchEpisodes;

    @Option(names = "--blur-threshold", paramLabel = "VAR", defaultValue = "12",
            description = "absolute floor: variance of the Laplacian below which an image is blurry whatever its"
                    + " camera's other frames are (default ${DEFAULT-VALUE})")
    double blur;

    @Option(names = "--blur-ratio", paramLabel = "R", defaultValue = "0.35",
            description = "relative rule: an image is also blurry below R times the median sharpness of its camera in"
                    + " the episode (default ${DEFAULT-VALUE}; 0 turns it off)")
    double blurRatio;

    @Option(names = "--static-threshold", paramLabel = "LEVELS", defaultValue = "1.0",
            description = "mean |difference| to the previous frame (grey levels) below which an image is static"
                    + " (default ${DEFAULT-VALUE})")
    double staticThreshold;

    @Option(names = "--hot-size", paramLabel = "PX", defaultValue = "320",
            description = "longest side of the hot JPEG copy (default ${DEFAULT-VALUE})")
    int hotSize;

    @Option(names = "--hot-quality", paramLabel = "Q", defaultValue = "90",
            description = "JPEG quality of the hot copy, 1-100 (default ${DEFAULT-VALUE})")
    int hotQuality;

    @Option(names = "--stop-after", paramLabel = "BATCHES", defaultValue = "0",
            description = "stop after this many committed batches (0: all); run again to continue")
    int stopAfter;

    @Option(names = "--model", paramLabel = "NAME|FILE|none", defaultValue = "mobilenet_v2",
            description = "embedding model: a built-in (mobilenet_v2: 96-d average-pooled, inception_v3: 768-d,"
                    + " mobilenet_v2_mac: 384-d max-pooled MAC for small local cues; or a full model id; pulled into the"
                    + " per-user cache on first use), an ONNX file, or none (default ${DEFAULT-VALUE})")
    String model;

    @Option(names = "--preprocessing", paramLabel = "unit|clip", defaultValue = "unit",
            description = "input scaling of an ONNX file given by --model: unit (RGB/255) or clip (CLIP mean/std)"
                    + " (default ${DEFAULT-VALUE})")
    String preprocessing;

    @Mixin
    JsonOutput jsonOutput;

    @Override
    public Integer call() throws IOException {
        Stride s = Usage.check(spec, "--stride", () -> Stride.parse(stride));
        Usage.require(spec, stopAfter >= 0, "--stop-after must be >= 0 (0: all batches), got " + stopAfter);
        if (threads != null) {
            Usage.atLeast(spec, "--threads", threads, 1);
        }
        Usage.atLeast(spec, "--batch-episodes", batchEpisodes, 1);
        Usage.atLeast(spec, "--blur-threshold", blur, 0.0);
        Usage.require(spec, blurRatio >= 0 && blurRatio < 1, "--blur-ratio must be in [0, 1), got " + blurRatio);
        Usage.atLeast(spec, "--static-threshold", staticThreshold, 0.0);
        Usage.atLeast(spec, "--hot-size", hotSize, 8);
        Usage.inRange(spec, "--hot-quality", hotQuality, 1, 100);
        EnrichOptions options = Usage.check(spec, null, () -> {
            EnrichOptions.Builder b = EnrichOptions.builder().stride(s).batchEpisodes(batchEpisodes).blurThreshold(blur).blurRatio(blurRatio)
                    .staticThreshold(staticThreshold).stopAfterBatches(stopAfter)
                    .image(FrameAnalyzer.Options.defaults().withHot(hotSize, hotQuality));
            if (threads != null) {
                b.threads(threads);
            }
            return b.build();
        });
        boolean onnxFile = !"none".equals(model) && (model.endsWith(".onnx") || Files.isRegularFile(Path.of(model)));
        BuiltinModel builtin = "none".equals(model) || onnxFile ? null
                : Usage.check(spec, "--model", () -> BuiltinModel.byName(model));
        Preprocessing pre = Usage.check(spec, "--preprocessing", () -> Preprocessing.byName(preprocessing));
        Usage.require(spec, onnxFile || !spec.commandLine().getParseResult().hasMatchedOption("--preprocessing"),
                "--preprocessing applies to an ONNX file given by --model, not to " + model);
        String lake = location.uri();
        boolean json = jsonOutput.enabled();
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter out = spec.commandLine().getOut();
        EnrichJob.Result r;
        try (Lake l = location.open(); Embedder embedder = embedder(onnxFile, builtin, pre, err)) {
            r = EnrichJob.run(l, embedder, options, p -> {
                err.println("enrich: " + p.line());
                err.flush();
            });
        }
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("lake", lake);
            m.put("episodes_pending", r.episodesPending());
            m.put("episodes_already_enriched", r.episodesAlreadyEnriched());
            m.put("episodes_enriched", r.episodesEnriched());
            m.put("frames", r.frames());
            m.put("images", r.images());
            m.put("decode_errors", r.decodeErrors());
            m.put("blurry", r.blurry());
            m.put("static", r.staticImages());
            m.put("embedded", r.embedded());
            m.put("embedding_model", r.embeddingModel());
            m.put("embedding_column", r.model() == null ? null : r.model().column());
            m.put("episodes_embedded_only", r.episodesEmbeddedOnly());
            m.put("vector_index", r.vectorIndex() == null ? null : Map.of("name", r.vectorIndex().name(),
                    "rows_indexed", r.vectorIndex().rowsIndexed(), "rows_unindexed", r.vectorIndex().rowsUnindexed()));
            m.put("batches", r.batches());
            m.put("stopped_early", r.stoppedEarly());
            m.put("seconds", r.seconds());
            m.put("stride", s.toString());
            m.put("commits", r.commits().stream().map(c -> c.tables().stream().map(t -> Map.of("table", t.table(),
                    "from_version", t.fromVersion(), "to_version", t.toVersion(), "rows", t.rowsWritten())).toList())
                    .toList());
            out.println(Json.MAPPER.writeValueAsString(m));
        } else {
            out.printf("enrich %s: %d episode(s) enriched, %d already enriched%s%n", lake, r.episodesEnriched(),
                    r.episodesAlreadyEnriched(), r.stoppedEarly() ? ", stopped early (" + (r.episodesPending()
                            - r.episodesEnriched()) + " left: run again to continue)" : "");
            out.printf("  %d frames, %d images in %d batch(es), %.1f s (%.0f frames/s)%n", r.frames(), r.images(),
                    r.batches(), r.seconds(), r.frames() / Math.max(r.seconds(), 1e-9));
            out.printf("  decode errors %d, blurry %d, static %d, embedded %d (%s)%n", r.decodeErrors(), r.blurry(),
                    r.staticImages(), r.embedded(), r.embeddingModel() == null ? "no model" : r.embeddingModel());
            if (r.model() != null) {
                out.printf("  vectors in episodes.%s / frames.%s%s; %s%n", r.model().column(), r.model().column(),
                        r.episodesEmbeddedOnly() > 0 ? " (" + r.episodesEmbeddedOnly() + " episode(s) only embedded: their"
                                + " image metrics were done)" : "", r.vectorIndex() != null ? "vector index "
                                + r.vectorIndex().name() + " on " + r.vectorIndex().rowsIndexed() + " episodes"
                                : r.stoppedEarly() ? "vector index not refreshed (stopped early)"
                                : "no vector index (searched flat below 50,000 episode vectors)");
            }
            if (!r.commits().isEmpty()) {
                List<CommitResult.TableCommit> last = r.commits().get(r.commits().size() - 1).tables();
                StringBuilder v = new StringBuilder("  now at");
                for (CommitResult.TableCommit t : last) {
                    v.append(' ').append(t.table()).append(" v").append(t.toVersion());
                }
                out.println(v);
            }
        }
        out.flush();
        return 0;
    }

    /**
     * @return the embedder --model names (an ONNX file, else the built-in model {@code m}), pulling a missing built-in
     *     model; null for none
     */
    private Embedder embedder(boolean onnxFile, BuiltinModel m, Preprocessing pre, PrintWriter err) throws IOException {
        if (onnxFile) {
            return OnnxEmbedder.builder(Path.of(model)).preprocessing(pre).build();
        }
        if (m == null) {
            return null;
        }
        return pulled(m, "enrich", err).open(m, 1);
    }

    /**
     * The user's model cache with a built-in model in it: pulled (and converted) first when it is not there, saying so
     * on {@code err}.
     *
     * @param command the command that needs it, for the message, e.g. {@code spark enrich}
     * @throws IOException when the model cannot be downloaded or converted
     */
    static ModelCache pulled(BuiltinModel m, String command, PrintWriter err) throws IOException {
        ModelCache cache = ModelCache.user();
        if (cache.find(m).isEmpty()) {
            err.println(command + ": model " + m.id() + " is not in " + cache.dir() + "; pulling it from "
                    + NsfwjsPackage.TARBALL_URL + " (once per user)");
            err.flush();
            cache.install(m, ModelCache.download(NsfwjsPackage.TARBALL_URL));
        }
        return cache;
    }
}
