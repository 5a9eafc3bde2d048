package io.flywheel.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import io.flywheel.curate.map.EmbeddingMap;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code flywheel map LAKE --out map.png}: the embedding map of the lake's episodes as an image. */
@Command(name = "map", mixinStandardHelpOptions = true,
        description = "Draw the episode embeddings projected on their first two principal components (PCA by power"
                + " iteration), coloured by scene, failures crossed in red, episodes mined into a training set ringed.")
final class MapCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    LakeLocation location;

    @Option(names = "--out", required = true, paramLabel = "PNG", description = "image to write")
    Path out;

    @Option(names = "--trainset", paramLabel = "TAG", description = "mark the episodes mined into this training set"
            + " (default: the newest one)")
    String trainset;

    @Option(names = "--max-points", paramLabel = "N", description = "most episodes drawn; more are thinned to every"
            + " k-th (default: ${DEFAULT-VALUE})")
    int maxPoints = 20_000;

    @Mixin
    JsonOutput jsonOutput; // with every point's coordinates

    @Override
    public Integer call() throws Exception {
        Usage.require(spec, maxPoints >= 1, "--max-points must be >= 1, got " + maxPoints);
        String lake = location.uri();
        boolean json = jsonOutput.enabled();
        EmbeddingMap m;
        try (Lake l = location.open()) {
            m = EmbeddingMap.read(l, EmbeddingMap.Options.builder().maxPoints(maxPoints).trainsetTag(trainset).build());
        }
        if (m.points().isEmpty()) {
            throw new io.flywheel.error.BadInputException("no episode of " + lake + " has an embedding yet (" + m.episodesTotal()
                    + " episode(s), not enriched yet: run flywheel enrich); nothing to draw");
        }
        m.writePng(out);
        Map<String, Integer> scenes = new TreeMap<>();
        m.points().forEach(p -> scenes.merge(p.scene(), 1, Integer::sum));
        long failures = m.points().stream().filter(EmbeddingMap.Point::failure).count();
        long mined = m.points().stream().filter(EmbeddingMap.Point::mined).count();
        if (json) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("lake", lake);
            o.put("out", out.toString());
            o.put("model", m.model());
            o.put("dimension", m.dimension());
            o.put("episodes_total", m.episodesTotal());
            o.put("episodes_with_embedding", m.episodesWithEmbedding());
            o.put("points_drawn", m.points().size());
            o.put("sample_stride", m.sampleStride());
            o.put("explained", List.of(m.explainedPc1(), m.explainedPc2()));
            o.put("scenes", scenes);
            o.put("failures", failures);
            o.put("mined", mined);
            o.put("mined_from", m.minedFrom());
            List<Map<String, Object>> pts = m.points().stream().map(EmbeddingMap.Point::fields).toList();
            o.put("points", pts);
            Json.print(System.out, o);
            return 0;
        }
        System.out.printf(Locale.ROOT, "embedding map of %d of %d episode(s)%s, %d-d: PC1 %.1f%%, PC2 %.1f%% of the variance%n",
                m.points().size(), m.episodesTotal(), m.model() == null ? "" : " (" + m.model() + ")", m.dimension(),
                100 * m.explainedPc1(), 100 * m.explainedPc2());
        System.out.println("scenes: " + scenes.entrySet().stream().map(e -> (e.getKey().isEmpty() ? "(unknown)" : e.getKey())
                + " " + e.getValue()).toList());
        System.out.println(failures + " failure(s), " + mined + " mined episode(s)"
                + (m.minedFrom() == null ? "" : " in " + m.minedFrom()) + "; drawn to " + out);
        return 0;
    }
}
