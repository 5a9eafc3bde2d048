package io.flywheel.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.EpisodeEnricher;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.StagedRows;
import io.flywheel.quality.RuleSet;
import io.flywheel.raw.RawStorage;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;
import io.flywheel.testkit.SharedData;

/**
 * The enrich computation inside Spark tasks (local[2], one session for the class): two BridgeData recordings, one
 * episode per partition, each task with its own {@link EpisodeEnricher}; the frames come back (as staged JSON rows)
 * with the same image metrics and pHashes as the same computation on the driver.
 */
class EpisodeEnricherTaskTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("EpisodeEnricherTaskTest")
                .config("spark.ui.enabled", "false").getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.close();
        }
    }

    @Test
    void tasksEnrichAsTheDriverDoes() throws Exception {
        var bridge = SharedData.data("camera/bridge-mcap");
        List<EpisodeRow> episodes = new ArrayList<>();
        Map<String, List<FrameRow>> frames = new LinkedHashMap<>();
        RowSink sink = new RowSink() {
            @Override
            public Set<String> committedRawFiles() {
                return Set.of();
            }

            @Override
            public OptionalLong commit(RecordingRows rows) {
                episodes.addAll(rows.episodes());
                for (FrameRow f : rows.frames()) {
                    frames.computeIfAbsent(f.episodeId(), k -> new ArrayList<>()).add(f);
                }
                return OptionalLong.of(1);
            }
        };
        IngestJob.run(sink, List.of(bridge.resolve("bridge_ep03.mcap"), bridge.resolve("bridge_ep04.mcap")),
                IngestOptions.defaults(), IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(2, episodes.size());
        long now = 1_700_000_000_000_000_000L;

        List<FrameRow> direct;
        try (EpisodeEnricher e = new EpisodeEnricher(RawStorage.local(), null, null,
                EnrichOptions.builder().threads(1).build())) {
            direct = new ArrayList<>(e.enrich(episodes, frames, now).frames());
        }

        // one task per episode: the episode row and its frames as staged JSON documents
        List<List<String>> work = new ArrayList<>();
        for (EpisodeRow ep : episodes) {
            List<String> docs = new ArrayList<>();
            docs.add(StagedRows.encode(ep));
            frames.get(ep.episodeId()).forEach(f -> docs.add(StagedRows.encode(f)));
            work.add(docs);
        }
        List<String> out = new JavaSparkContext(spark.sparkContext()).parallelize(work, 2).mapPartitions(it -> {
            List<String> res = new ArrayList<>();
            try (EpisodeEnricher e = new EpisodeEnricher(RawStorage.local(), null, null,
                    EnrichOptions.builder().threads(1).build())) {
                while (it.hasNext()) {
                    List<String> docs = it.next();
                    EpisodeRow ep = StagedRows.episode(docs.get(0));
                    List<FrameRow> fs = new ArrayList<>();
                    docs.subList(1, docs.size()).forEach(d -> fs.add(StagedRows.frame(d)));
                    for (FrameRow f : e.enrich(List.of(ep), Map.of(ep.episodeId(), fs), now).frames()) {
                        res.add(StagedRows.encode(f));
                    }
                }
            }
            return res.iterator();
        }).collect();

        List<FrameRow> fromSpark = new ArrayList<>(out.stream().map(StagedRows::frame).toList());
        Comparator<FrameRow> order = Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex);
        fromSpark.sort(order);
        direct.sort(order);
        assertEquals(20, fromSpark.size()); // 10 steps per BridgeData episode
        for (int i = 0; i < direct.size(); i++) {
            FrameRow a = direct.get(i);
            FrameRow b = fromSpark.get(i);
            assertEquals(a.episodeId() + "/" + a.frameIndex(), b.episodeId() + "/" + b.frameIndex());
            assertEquals(a.enrichment().size(), b.enrichment().size());
            for (int k = 0; k < a.enrichment().size(); k++) {
                ImageEnrichment x = a.enrichment().get(k);
                ImageEnrichment y = b.enrichment().get(k);
                assertNull(x.decodeError());
                assertNotNull(x.phash());
                assertEquals(x.phash(), y.phash());
                assertEquals(x.sharpness(), y.sharpness());
                assertEquals(x.meanAbsDiff(), y.meanAbsDiff());
                assertEquals(x.blurry(), y.blurry());
                assertEquals(x, y);
            }
            assertEquals(a.phase(), b.phase());
            assertEquals(a.gripperState(), b.gripperState());
        }
    }
}
