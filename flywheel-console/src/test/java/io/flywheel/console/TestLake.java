package io.flywheel.console;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;

import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.RawLocator;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.quality.RuleSet;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.Preset;
import io.flywheel.sim.ProgressListener;
import io.flywheel.sim.SimOptions;
import io.flywheel.testkit.SharedData;

/**
 * The small lake the console tests run against, built once per test JVM under {@code java.io.tmpdir}
 * (the module's target folder):
 * <ul>
 *   <li>the 25 real BridgeData episodes of {@code camera/bridge-mcap} (10 frames each at 5 Hz, three
 *       64x64 JPEG cameras, 7-d state and action) and a simulated fleet, preset tiny, seed 42 (6
 *       episodes of about 2 s on 2 robots: three 30 Hz cameras, 200 Hz joints, 50 Hz commands, one
 *       glass-cup failure), ingested by {@link IngestJob} with the default alignment;</li>
 *   <li>episode embeddings by {@link #embed}: the mean over every 5th frame of the master camera of the
 *       frame shrunk to 8x8 RGB (192 values in [0, 1]), L2-normalised; written as the vectors of the model
 *       {@code test-pixels-8x8} (registered: episodes column {@code emb_test_pixels_8x8}) in a new version of the
 *       episodes table;</li>
 *   <li>two training sets: {@code train-v1}, a 30% uniform sample (seed 1), and {@code train-v2}, the
 *       same sample plus the 3 episodes nearest (cosine) to the failure, as mining would add them.</li>
 * </ul>
 */
public final class TestLake {
    /** Embedding model id written with the test embeddings. */
    public static final String MODEL = "test-pixels-8x8";
    /** Episodes: 25 BridgeData + 6 simulated. */
    public static final int EPISODES = 31;

    private static Path built;
    private static List<String> mined;

    private TestLake() {}

    /** @return the lake folder, built on first use */
    public static synchronized Path get() throws IOException {
        if (built != null) {
            return built;
        }
        Path bridge = SharedData.data("camera/bridge-mcap");
        Path root = Path.of(System.getProperty("java.io.tmpdir")).resolve("console-test-lake");
        io.flywheel.lake.LocalFiles.deleteTree(root);
        Path fleet = root.resolve("fleet");
        FleetSimulator.run(SimOptions.builder(Preset.TINY).seed(42).outDir(fleet).threads(1)
                .jpegEncoder(JpegEncoder.Kind.IMAGEIO).build(), ProgressListener.NONE);
        Path lakeDir = root.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            IngestJob.run(lake, List.of(bridge, fleet), IngestOptions.defaults(), IngestJob.AlignConfig.defaults(),
                    RuleSet.defaults(), line -> { });
            Map<String, float[]> emb = embed(lake);
            writeEmbeddings(lake, emb);
            String failure = failureEpisode(lake);
            mined = nearest(emb, failure, 3);
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").seed(1).baseRatio(0.3).sampleRateHz(0)
                    .build(), TrainsetBuilder.Progress.NONE);
            List<MinedEpisode> neighbours = new ArrayList<>();
            for (int i = 0; i < mined.size(); i++) {
                neighbours.add(new MinedEpisode(mined.get(i), failure, 0.0, i + 1));
            }
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v2").seed(1).baseRatio(0.3).sampleRateHz(0)
                    .mined(neighbours).lineage("query_episode_ids", List.of(failure)).lineage("embedding_model", MODEL)
                    .build(), TrainsetBuilder.Progress.NONE);
        }
        built = lakeDir;
        return built;
    }

    /** @return the episodes mined into train-v2 (the failure's 3 nearest neighbours) */
    public static synchronized List<String> mined() throws IOException {
        get();
        return mined;
    }

    /** @return the id of the one failure episode (the simulated glass-cup failure) */
    public static String failureEpisode(Lake lake) {
        List<String> ids = new ArrayList<>();
        try (LakeTable t = lake.table("episodes")) {
            t.scan(ScanRequest.builder().columns("episode_id", "outcome").filter("outcome LIKE 'failure%'").build(), b -> {
                for (int i = 0; i < b.rowCount(); i++) {
                    ids.add(b.column("episode_id").getString(i));
                }
            });
        }
        if (ids.size() != 1) {
            throw new IllegalStateException("expected exactly one failure episode in the test lake, found " + ids);
        }
        return ids.get(0);
    }

    /**
     * A simple real embedder: per episode, the mean of the master camera's frames (every 5th) shrunk to
     * 8x8 RGB by area averaging, values in [0, 1], L2-normalised.
     *
     * @return episode id to float32[192]
     */
    static Map<String, float[]> embed(Lake lake) throws IOException {
        Map<String, double[]> sums = new LinkedHashMap<>();
        Map<String, Integer> counts = new LinkedHashMap<>();
        List<Object[]> locators = new ArrayList<>();
        try (LakeTable t = lake.table("frames")) {
            t.scan(ScanRequest.builder().columns("episode_id", "frame_index", "images").filter("frame_index % 5 = 0").build(),
                    b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            List<io.flywheel.rows.ImageLocator> images = b.imageLocators(i);
                            if (images.isEmpty()) {
                                continue;
                            }
                            io.flywheel.rows.ImageLocator l = images.get(0);
                            locators.add(new Object[] {b.column("episode_id").getString(i), RawLocator.fromStored(
                                    l.rawUri(), l.chunkOffset(), l.offset(), l.length(), l.compression())});
                        }
                    });
        }
        try (LocatorReader r = new LocatorReader()) {
            for (Object[] l : locators) {
                BufferedImage img = ImageIO.read(new ByteArrayInputStream(r.read((RawLocator) l[1])));
                double[] v = pixels8x8(img);
                double[] s = sums.computeIfAbsent((String) l[0], k -> new double[v.length]);
                for (int k = 0; k < v.length; k++) {
                    s[k] += v[k];
                }
                counts.merge((String) l[0], 1, Integer::sum);
            }
        }
        Map<String, float[]> out = new LinkedHashMap<>();
        sums.forEach((id, s) -> {
            double n = 0;
            for (double x : s) {
                n += x * x;
            }
            n = Math.sqrt(n);
            float[] f = new float[s.length];
            for (int k = 0; k < s.length; k++) {
                f[k] = (float) (s[k] / n);
            }
            out.put(id, f);
        });
        return out;
    }

    private static double[] pixels8x8(BufferedImage img) {
        double[] v = new double[192];
        int w = img.getWidth();
        int h = img.getHeight();
        int[] n = new int[64];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int cell = (y * 8 / h) * 8 + x * 8 / w;
                int rgb = img.getRGB(x, y);
                v[cell * 3] += ((rgb >> 16) & 0xff) / 255.0;
                v[cell * 3 + 1] += ((rgb >> 8) & 0xff) / 255.0;
                v[cell * 3 + 2] += (rgb & 0xff) / 255.0;
                n[cell]++;
            }
        }
        for (int c = 0; c < 64; c++) {
            for (int k = 0; k < 3; k++) {
                v[c * 3 + k] /= Math.max(1, n[c]);
            }
        }
        return v;
    }

    /** @return the k episodes (not {@code query}) with the smallest cosine distance to it */
    static List<String> nearest(Map<String, float[]> emb, String query, int k) {
        float[] q = emb.get(query);
        return emb.keySet().stream().filter(id -> !id.equals(query))
                .sorted(Comparator.comparingDouble((String id) -> -dot(q, emb.get(id))).thenComparing(id -> id))
                .limit(k).toList();
    }

    private static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    /**
     * Registers the test model and writes its vectors as a new version of the episodes table (a column-scoped update
     * of the model's columns, as enrich writes them).
     */
    static void writeEmbeddings(Lake lake, Map<String, float[]> emb) {
        io.flywheel.lake.EmbeddingModel m = lake.registerModel(MODEL, 192, "");
        List<io.flywheel.rows.EpisodeRow> rows = new ArrayList<>();
        try (LakeTable t = lake.table("episodes")) {
            for (io.flywheel.rows.EpisodeRow e : t.episodes(ScanRequest.all())) {
                rows.add(e.withEmbedding(MODEL, emb.get(e.episodeId()), 1L));
            }
        }
        lake.begin("test-embeddings").updateEpisodes(io.flywheel.lake.TableSchemas.episodeModelColumns(m), rows)
                .commit();
    }
}
