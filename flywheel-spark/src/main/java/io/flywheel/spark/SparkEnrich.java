package io.flywheel.spark;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.SparkFiles;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.Embedder;
import io.flywheel.enrich.EpisodeEnricher;
import io.flywheel.enrich.model.OnnxEmbedder;
import io.flywheel.enrich.model.Preprocessing;
import io.flywheel.ingest.StagedRows;
import io.flywheel.raw.RawStorage;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;

/**
 * The enrich computation of {@code flywheel enrich} on Spark: one task per episode, each running
 * {@link EpisodeEnricher} with the same {@link EnrichOptions} ({@link Settings}); the lake side stages the work and commits the result.
 *
 * <p>Files in the staging folder:
 * <ul>
 *   <li>{@code work.jsonl} (read): one line per episode, a JSON array of {@link StagedRows} documents: the episode
 *       row, then its frames rows.</li>
 *   <li>{@code episodes.jsonl}, {@code frames.jsonl} (written): the enriched rows, one {@link StagedRows} document a
 *       line.</li>
 *   <li>{@code failed.jsonl} (written): one {@code {"episode":..., "reason":...}} line per episode whose task failed
 *       (its rows are left out; the other episodes are not affected).</li>
 * </ul>
 * The ONNX model file, when given, is shipped to the executors with {@code SparkContext.addFile} and opened in each
 * task from {@code SparkFiles.get}. The images are read
 * through their raw locators, from the executors' file system ({@link RawStorage#local()}).
 */
public final class SparkEnrich {
    private SparkEnrich() {}

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The enrich options of {@code flywheel enrich}, as values a task gets (built into {@link EnrichOptions} there).
     *
     * @param stride {@link io.flywheel.enrich.Stride#parse} text: K or keyframes
     * @param threads decode threads per task, &gt;= 1
     * @param blurThreshold variance of the Laplacian below which an image is blurry
     * @param blurRatio see {@link EnrichOptions#blurRatio()}
     * @param staticThreshold grey levels below which an image is static
     * @param hotSize hot JPEG long side, px
     * @param hotQuality hot JPEG quality, 1..100
     */
    public record Settings(String stride, int threads, double blurThreshold, double blurRatio, double staticThreshold,
                           int hotSize, int hotQuality) implements java.io.Serializable {
        /** @return the options (throws IllegalArgumentException for an invalid value) */
        public EnrichOptions options() {
            return EnrichOptions.builder().stride(io.flywheel.enrich.Stride.parse(stride)).threads(threads)
                    .blurThreshold(blurThreshold).blurRatio(blurRatio).staticThreshold(staticThreshold)
                    .image(io.flywheel.enrich.image.FrameAnalyzer.Options.defaults().withHot(hotSize, hotQuality))
                    .build();
        }
    }

    /**
     * What the job did.
     *
     * @param episodes episodes enriched
     * @param frames frames rows enriched
     * @param images camera images measured
     * @param decodeErrors images that could not be decoded
     * @param blurry images below the blur threshold
     * @param staticImages images below the static threshold
     * @param embedded images embedded
     * @param failed episodes whose task failed: episode id to reason
     */
    public record Result(long episodes, long frames, long images, long decodeErrors, long blurry, long staticImages,
                         long embedded, Map<String, String> failed) {}

    /**
     * Runs the job on {@code staging/work.jsonl}.
     *
     * @param model the ONNX file, or null for no embeddings
     * @param modelId the model's id (as {@code flywheel enrich} opens it), with {@code model}
     * @param modelKey the model's id in the lake (its column key), with {@code model}
     * @param preprocessing the model's input scaling, with {@code model}
     * @param nowNs the {@code enriched_at_ns} of every episode, ns since the epoch
     * @param partitions tasks (at most one per episode); 0: one per episode
     */
    public static Result run(SparkSession spark, Path staging, Settings settings, Path model, String modelId, String modelKey,
                             Preprocessing preprocessing, long nowNs, int partitions) throws IOException {
        List<String> work = Files.readAllLines(staging.resolve("work.jsonl"), StandardCharsets.UTF_8).stream()
                .filter(l -> !l.isBlank()).toList();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        String modelName = null;
        if (model != null) {
            jsc.addFile(model.toAbsolutePath().toString());
            modelName = model.getFileName().toString();
        }
        String shipped = modelName;
        int n = Math.max(1, partitions <= 0 ? work.size() : Math.min(partitions, work.size()));
        List<String> out = work.isEmpty() ? List.of() : jsc.parallelize(work, n).mapPartitions(it -> {
            List<String> res = new ArrayList<>();
            Embedder embedder = shipped == null ? null
                    : OnnxEmbedder.builder(Path.of(SparkFiles.get(shipped))).modelId(modelId).preprocessing(preprocessing)
                    .build();
            try (EpisodeEnricher e = new EpisodeEnricher(RawStorage.local(), embedder, modelKey, settings.options())) {
                while (it.hasNext()) {
                    List<String> docs = JSON.readValue(it.next(), new TypeReference<List<String>>() { });
                    EpisodeRow ep = StagedRows.episode(docs.get(0));
                    try {
                        List<FrameRow> fs = new ArrayList<>();
                        docs.subList(1, docs.size()).forEach(d -> fs.add(StagedRows.frame(d)));
                        EpisodeEnricher.Output o = e.enrich(List.of(ep), Map.of(ep.episodeId(), fs), nowNs);
                        List<String> rows = new ArrayList<>();
                        o.episodes().forEach(r -> rows.add("E" + StagedRows.encode(r)));
                        o.frames().forEach(r -> rows.add("F" + StagedRows.encode(r)));
                        EpisodeEnricher.Tally t = o.tally();
                        rows.add("T" + JSON.writeValueAsString(List.of(t.frames(), t.images(), t.decodeErrors(),
                                t.blurry(), t.staticImages(), t.embedded())));
                        res.addAll(rows);
                    } catch (Exception ex) {
                        String reason = ex.getMessage() == null ? ex.getClass().getName() : ex.getMessage();
                        res.add("X" + JSON.writeValueAsString(Map.of("episode", ep.episodeId(), "reason", reason)));
                    }
                }
            } finally {
                if (embedder != null) {
                    embedder.close();
                }
            }
            return res.iterator();
        }).collect();
        long[] tally = new long[6];
        long episodes = 0;
        Map<String, String> failed = new LinkedHashMap<>();
        Path ep = staging.resolve("episodes.jsonl.part");
        Path fr = staging.resolve("frames.jsonl.part");
        Path fa = staging.resolve("failed.jsonl.part");
        try (BufferedWriter we = Files.newBufferedWriter(ep); BufferedWriter wf = Files.newBufferedWriter(fr);
                BufferedWriter wx = Files.newBufferedWriter(fa)) {
            for (String line : out) {
                String body = line.substring(1);
                switch (line.charAt(0)) {
                    case 'E' -> {
                        we.write(body);
                        we.newLine();
                        episodes++;
                    }
                    case 'F' -> {
                        wf.write(body);
                        wf.newLine();
                    }
                    case 'T' -> {
                        long[] t = JSON.readValue(body, long[].class);
                        for (int i = 0; i < tally.length; i++) {
                            tally[i] += t[i];
                        }
                    }
                    default -> {
                        Map<String, String> m = JSON.readValue(body, new TypeReference<Map<String, String>>() { });
                        failed.put(m.get("episode"), m.get("reason"));
                        wx.write(body);
                        wx.newLine();
                    }
                }
            }
        }
        Files.move(ep, staging.resolve("episodes.jsonl"), StandardCopyOption.REPLACE_EXISTING);
        Files.move(fr, staging.resolve("frames.jsonl"), StandardCopyOption.REPLACE_EXISTING);
        Files.move(fa, staging.resolve("failed.jsonl"), StandardCopyOption.REPLACE_EXISTING);
        return new Result(episodes, tally[0], tally[1], tally[2], tally[3], tally[4], tally[5], failed);
    }
}
