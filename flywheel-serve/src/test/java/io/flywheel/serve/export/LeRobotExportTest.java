package io.flywheel.serve.export;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.dataset.file.FileSystemDatasetFactory;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.dataset.scanner.ScanOptions;
import org.apache.arrow.dataset.scanner.Scanner;
import org.apache.arrow.dataset.source.Dataset;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.video.Mp4VideoReader;
import io.flywheel.enrich.video.VideoFrame;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.quality.RuleSet;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;
import io.flywheel.testkit.Node;
import io.flywheel.testkit.SharedData;

/**
 * The LeRobot v3.0 export of a training set of all 25 real BridgeData episodes (10 frames at a
 * nominal 5 Hz, 3 cameras of 64x64 JPEG, 7-d state and action, 4 tasks), checked against the
 * samples the loader reads, by decoding the videos, and by a second Parquet reader (hyparquet).
 */
class LeRobotExportTest {
    static final ObjectMapper JSON = new ObjectMapper();
    /** Mean PSNR of the decoded video frames against the source JPEG frames must exceed this (dB). */
    static final double PSNR_BOUND_DB = 30.0;

    @TempDir
    static Path tmp;
    static Path lakeDir;
    static Path out;
    static LeRobotExportResult result;
    static Trainset set;
    static List<Sample> samples = new ArrayList<>();
    static Map<String, String> taskOfEpisode = new HashMap<>();

    @BeforeAll
    static void build() throws IOException {
        lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-all").baseRatio(1.0).seed(1).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            set = Trainsets.open(lake, "train-all");
            Trainsets.episodes(lake, set).forEach(e -> taskOfEpisode.put(e.info().episodeId(), e.info().task()));
            try (TrainsetLoader l = TrainsetLoader.open(lake, "train-all",
                    LoaderOptions.builder().images(LoaderOptions.Images.DECODED).build())) {
                long[] all = new long[(int) l.size()];
                for (int i = 0; i < all.length; i++) {
                    all[i] = i;
                }
                samples.addAll(l.get(all));
            }
            out = tmp.resolve("lerobot");
            result = LeRobotExporter.export(lake, "train-all", out, LeRobotExportOptions.defaults(), line -> { });
        }
    }

    @Test
    void infoJsonHasTheV3LayoutAndTheSetsTotals() throws IOException {
        JsonNode info = JSON.readTree(out.resolve("meta/info.json").toFile());
        assertEquals(25, set.episodeCount());
        assertEquals(250, set.sampleCount());
        assertEquals("v3.0", info.get("codebase_version").asText());
        assertEquals(set.episodeCount(), info.get("total_episodes").asLong());
        assertEquals(set.sampleCount(), info.get("total_frames").asLong());
        assertEquals(4, info.get("total_tasks").asInt()); // README: 4 BridgeData tasks
        assertEquals(5, info.get("fps").asInt()); // sample_rate_hz 0: from the 200 ms frame interval
        assertEquals("0:25", info.get("splits").get("train").asText());
        assertEquals("data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet", info.get("data_path").asText());
        assertEquals("videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4", info.get("video_path").asText());
        assertEquals(1000, info.get("chunks_size").asInt());
        assertEquals(100, info.get("data_files_size_in_mb").asInt());
        assertEquals(500, info.get("video_files_size_in_mb").asInt());
        JsonNode f = info.get("features");
        assertEquals(List.of("observation.state", "action", "observation.images.camera0", "observation.images.camera1",
                "observation.images.camera2", "timestamp", "frame_index", "episode_index", "index", "task_index"),
                iterable(f.fieldNames()));
        assertEquals("float32", f.get("observation.state").get("dtype").asText());
        assertEquals("[7]", f.get("observation.state").get("shape").toString());
        assertEquals(7, f.get("action").get("names").size());
        JsonNode cam = f.get("observation.images.camera0");
        assertEquals("video", cam.get("dtype").asText());
        assertEquals("[64,64,3]", cam.get("shape").toString());
        assertEquals("[\"height\",\"width\",\"channels\"]", cam.get("names").toString());
        assertEquals("h264", cam.get("info").get("video.codec").asText());
        assertEquals("yuv420p", cam.get("info").get("video.pix_fmt").asText());
        assertEquals(5, cam.get("info").get("video.fps").asInt());
        assertEquals("[1]", f.get("timestamp").get("shape").toString());
        assertEquals("int64", f.get("index").get("dtype").asText());
        assertEquals(250, result.frames());
        assertEquals(1, result.dataFiles());
        assertEquals(3, result.videoFiles());
        assertTrue(Files.isRegularFile(out.resolve("videos/observation.images.camera2/chunk-000/file-000.mp4")));
        assertFalse(result.cameras().get(0).padded());
    }

    @Test
    void dataRowsHoldTheSamplesStateActionAndIndices() throws IOException {
        Table data = read(out.resolve("data/chunk-000/file-000.parquet"));
        // the ARROW:schema footer makes state/action fixed-size lists, as Hugging Face datasets writes them
        assertEquals(new ArrowType.FixedSizeList(7), data.schema.findField("observation.state").getType());
        assertEquals(250, data.rows.size());
        Map<String, Long> taskIndex = tasks();
        for (int r = 0; r < 250; r++) {
            Map<String, Object> row = data.rows.get(r);
            Sample s = samples.get(r);
            assertArrayEquals(floats(s.state()), floats((List<?>) row.get("observation.state")), "row " + r);
            assertArrayEquals(floats(s.action()), floats((List<?>) row.get("action")), "row " + r);
            long frame = (Long) row.get("frame_index");
            assertEquals(r % 10, frame);
            assertEquals(r / 10, (Long) row.get("episode_index"));
            assertEquals(r, (Long) row.get("index"));
            assertEquals((float) (frame / 5.0), (Float) row.get("timestamp"));
            assertEquals(taskIndex.get(taskOfEpisode.get(s.episodeId())), row.get("task_index"));
        }
    }

    @Test
    void statsEqualWhatTheSamplesGive() throws IOException {
        JsonNode stats = JSON.readTree(out.resolve("meta/stats.json").toFile());
        for (String key : List.of("observation.state", "action")) {
            JsonNode st = stats.get(key);
            assertEquals(250, st.get("count").get(0).asLong());
            for (int d = 0; d < 7; d++) {
                double sum = 0;
                double min = Double.MAX_VALUE;
                double max = -Double.MAX_VALUE;
                for (Sample s : samples) {
                    double v = (float) (key.equals("action") ? s.action()[d] : s.state()[d]);
                    sum += v;
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
                double mean = sum / 250;
                double ss = 0;
                for (Sample s : samples) {
                    double v = (float) (key.equals("action") ? s.action()[d] : s.state()[d]);
                    ss += (v - mean) * (v - mean);
                }
                assertEquals(mean, st.get("mean").get(d).asDouble(), 1e-12, key + " mean " + d);
                assertEquals(Math.sqrt(ss / 250), st.get("std").get(d).asDouble(), 1e-12, key + " std " + d);
                assertEquals(min, st.get("min").get(d).asDouble(), 0, key + " min " + d);
                assertEquals(max, st.get("max").get(d).asDouble(), 0, key + " max " + d);
                assertTrue(st.get("q01").get(d).asDouble() >= min && st.get("q99").get(d).asDouble() <= max);
            }
        }
        // images: per channel over all pixels of the source frames, in [0, 1], shape [3][1][1]
        JsonNode img = stats.get("observation.images.camera1");
        for (int c = 0; c < 3; c++) {
            double sum = 0;
            long n = 0;
            for (Sample s : samples) {
                RgbImage im = s.images().get(1).decoded();
                for (int y = 0; y < im.height(); y++) {
                    for (int x = 0; x < im.width(); x++) {
                        sum += im.at(x, y, c);
                        n++;
                    }
                }
            }
            assertEquals(sum / n / 255.0, img.get("mean").get(c).get(0).get(0).asDouble(), 1e-12, "channel " + c);
        }
        assertEquals(250, img.get("count").get(0).asLong());
        assertEquals(0, stats.get("frame_index").get("min").get(0).asLong());
        assertEquals(9, stats.get("frame_index").get("max").get(0).asLong());
        assertEquals(4.5, stats.get("frame_index").get("mean").get(0).asDouble(), 1e-12);
        assertEquals(249, stats.get("index").get("max").get(0).asLong());
    }

    @Test
    void decodedVideoFramesLineUpWithTheTimestampsAndTheSourceFrames() throws IOException {
        Table episodes = read(out.resolve("meta/episodes/chunk-000/file-000.parquet"));
        assertEquals(25, episodes.rows.size());
        for (int c = 0; c < 3; c++) {
            String key = "observation.images.camera" + c;
            List<VideoFrame> frames = new ArrayList<>();
            try (Mp4VideoReader r = Mp4VideoReader.open(out.resolve("videos/" + key + "/chunk-000/file-000.mp4"))) {
                for (VideoFrame f = r.next(); f != null; f = r.next()) {
                    frames.add(f);
                }
            }
            assertEquals(250, frames.size(), key + " total frames");
            double psnrSum = 0;
            double psnrMin = Double.MAX_VALUE;
            for (Map<String, Object> ep : episodes.rows) {
                long e = (Long) ep.get("episode_index");
                double from = (Double) ep.get("videos/" + key + "/from_timestamp");
                assertEquals(2.0 * e, from, 1e-12); // 10 frames of 0.2 s before each episode
                assertEquals(from + 2.0, (Double) ep.get("videos/" + key + "/to_timestamp"), 1e-12);
                long start = (Long) ep.get("dataset_from_index");
                assertEquals(start + 10, (Long) ep.get("dataset_to_index"));
                for (int i = 0; i < 10; i++) {
                    // LeRobot's lookup: from_timestamp + timestamp (float32 in the data file)
                    double query = from + (float) (i / 5.0);
                    VideoFrame f = frames.get((int) (start + i));
                    assertEquals(query, f.seconds(), 1e-4, key + " episode " + e + " frame " + i);
                    double p = psnr(samples.get((int) (start + i)).images().get(c).decoded(), f.image());
                    psnrSum += p;
                    psnrMin = Math.min(psnrMin, p);
                }
            }
            double mean = psnrSum / 250;
            System.out.printf("%s: PSNR mean %.2f dB, min %.2f dB (encoder %s)%n", key, mean, psnrMin, result.encoder());
            assertTrue(mean > PSNR_BOUND_DB, key + " mean PSNR " + mean);
        }
        Map<String, Object> ep3 = episodes.rows.get(3);
        assertEquals(10L, ep3.get("length"));
        assertEquals(List.of(taskOfEpisode.get(samples.get(30).episodeId())), ep3.get("tasks"));
        assertEquals(List.of(10L), ep3.get("stats/observation.state/count"));
        assertEquals(List.of(30L), ep3.get("stats/index/min"));
    }

    @Test
    void hyparquetReadsTheSameTables() throws Exception {
        Path dataFile = out.resolve("data/chunk-000/file-000.parquet");
        Path tasksFile = out.resolve("meta/tasks.parquet");
        Path epFile = out.resolve("meta/episodes/chunk-000/file-000.parquet");
        Node.Result r = Node.run("parquet-read.mjs", dataFile.toString(), tasksFile.toString(), epFile.toString());
        assertEquals(0, r.exitCode(), r.stderr());
        JsonNode all = JSON.readTree(r.stdout());
        JsonNode data = all.get(dataFile.toString());
        assertEquals(250, data.get("num_rows").asInt());
        for (int i : new int[] {0, 17, 249}) {
            JsonNode row = data.get("rows").get(i);
            assertArrayEquals(floats(samples.get(i).state()), floats(row.get("observation.state")));
            assertArrayEquals(floats(samples.get(i).action()), floats(row.get("action")));
            assertEquals(i, row.get("index").asLong());
            assertEquals((float) ((i % 10) / 5.0), (float) row.get("timestamp").asDouble());
        }
        JsonNode tasks = all.get(tasksFile.toString());
        assertEquals("[\"task_index\",\"__index_level_0__\"]", tasks.get("columns").toString());
        // the footer's pandas metadata makes the task strings the frame's index, as pandas wrote LeRobot's own files:
        // pd.read_parquet(...).loc[text].task_index and .iloc[i].name are what LeRobot calls
        JsonNode pandas = JSON.readTree(tasks.get("metadata").get("pandas").asText());
        assertEquals("[\"__index_level_0__\"]", pandas.get("index_columns").toString());
        JsonNode indexColumn = pandas.get("columns").get(1);
        assertTrue(indexColumn.get("name").isNull(), pandas.toString());
        assertEquals("__index_level_0__", indexColumn.get("field_name").asText());
        assertEquals("unicode", indexColumn.get("pandas_type").asText());
        assertEquals("task_index", pandas.get("columns").get(0).get("field_name").asText());
        assertEquals("int64", pandas.get("columns").get(0).get("pandas_type").asText());
        Map<String, Long> javaTasks = tasks();
        for (JsonNode t : tasks.get("rows")) {
            assertEquals(javaTasks.get(t.get("__index_level_0__").asText()), t.get("task_index").asLong());
        }
        JsonNode eps = all.get(epFile.toString());
        assertEquals(25, eps.get("num_rows").asInt());
        JsonNode e7 = eps.get("rows").get(7);
        assertEquals(70, e7.get("dataset_from_index").asLong());
        assertEquals(14.0, e7.get("videos/observation.images.camera0/from_timestamp").asDouble(), 0);
        assertEquals(3, e7.get("stats/observation.images.camera0/mean").size()); // [3][1][1]
    }

    @Test
    void badInputsAreRefusedWithoutTouchingTheOutput() throws IOException {
        try (Lake lake = Lake.open(lakeDir)) {
            io.flywheel.error.NotFoundException unknown = assertThrows(io.flywheel.error.NotFoundException.class, () -> LeRobotExporter.export(lake, "nope",
                    tmp.resolve("x"), LeRobotExportOptions.defaults(), l -> { }));
            assertTrue(unknown.getMessage().contains("no training set 'nope'"), unknown.getMessage());
            assertFalse(Files.exists(tmp.resolve("x")));

            ExportException exists = assertThrows(ExportException.class, () -> LeRobotExporter.export(lake, "train-all", out,
                    LeRobotExportOptions.defaults(), l -> { }));
            assertTrue(exists.getMessage().contains("--force"), exists.getMessage());

            Path other = Files.createDirectories(tmp.resolve("other"));
            Files.writeString(other.resolve("keep.txt"), "mine");
            ExportException notOurs = assertThrows(ExportException.class, () -> LeRobotExporter.export(lake, "train-all",
                    other, LeRobotExportOptions.builder().force(true).build(), l -> { }));
            assertTrue(notOurs.getMessage().contains("not a LeRobot dataset"), notOurs.getMessage());
            assertEquals("mine", Files.readString(other.resolve("keep.txt")));

            // --force replaces an earlier export; leftovers of the old one are gone
            Path again = tmp.resolve("again");
            LeRobotExporter.export(lake, "train-all", again, LeRobotExportOptions.defaults(), l -> { });
            Files.writeString(again.resolve("stale.txt"), "old");
            LeRobotExportResult r = LeRobotExporter.export(lake, "train-all", again,
                    LeRobotExportOptions.builder().force(true).fps(10).build(), l -> { });
            assertEquals(10, r.fps());
            assertFalse(Files.exists(again.resolve("stale.txt")));
            try (var s = Files.list(tmp)) {
                assertTrue(s.noneMatch(p -> p.getFileName().toString().contains(".export-")), "no temp folder left");
            }
        }
    }

    @Test
    void oddSizesArePaddedByRepeatingTheLastColumnAndRow() {
        byte[] px = new byte[3 * 3 * 3];
        for (int i = 0; i < px.length; i++) {
            px[i] = (byte) i;
        }
        RgbImage odd = new RgbImage(3, 3, px);
        RgbImage even = LeRobotExporter.padToEven(odd);
        assertEquals(4, even.width());
        assertEquals(4, even.height());
        for (int y = 0; y < 4; y++) {
            for (int x = 0; x < 4; x++) {
                for (int c = 0; c < 3; c++) {
                    assertEquals(odd.at(Math.min(x, 2), Math.min(y, 2), c), even.at(x, y, c));
                }
            }
        }
        RgbImage same = new RgbImage(2, 2, new byte[12]);
        assertTrue(same == LeRobotExporter.padToEven(same));
        assertEquals("camera0", LeRobotExporter.cameraKey("/camera0/image/compressed"));
        assertEquals("wrist_left", LeRobotExporter.cameraKey("/wrist/left/image_raw"));
        assertEquals("image", LeRobotExporter.cameraKey("/image"));
        assertEquals("wrist.left", LeRobotExporter.cameraKey("observation.images.wrist.left")); // imported LeRobot
    }

    // --- helpers ---

    record Table(Schema schema, List<Map<String, Object>> rows) {}

    /** Reads a Parquet file with Arrow's C++ reader (arrow-dataset), a second implementation. */
    static Table read(Path file) {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (BufferAllocator a = new RootAllocator();
                FileSystemDatasetFactory fac = new FileSystemDatasetFactory(a, NativeMemoryPool.getDefault(), FileFormat.PARQUET,
                        file.toUri().toString());
                Dataset ds = fac.finish(); Scanner sc = ds.newScan(new ScanOptions(4096)); ArrowReader r = sc.scanBatches()) {
            Schema schema = fac.inspect();
            while (r.loadNextBatch()) {
                VectorSchemaRoot root = r.getVectorSchemaRoot();
                for (int i = 0; i < root.getRowCount(); i++) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (FieldVector v : root.getFieldVectors()) {
                        row.put(v.getName(), plain(v.getObject(i)));
                    }
                    rows.add(row);
                }
            }
            return new Table(schema, rows);
        } catch (Exception e) {
            throw new IllegalStateException(file + ": " + e.getMessage(), e);
        }
    }

    private static Object plain(Object o) {
        if (o instanceof org.apache.arrow.vector.util.Text t) {
            return t.toString();
        }
        if (o instanceof List<?> l) {
            return l.stream().map(LeRobotExportTest::plain).toList();
        }
        return o;
    }

    static Map<String, Long> tasks() {
        Map<String, Long> m = new HashMap<>();
        for (Map<String, Object> r : read(out.resolve("meta/tasks.parquet")).rows) {
            m.put((String) r.get(LeRobotExporter.PANDAS_INDEX), (Long) r.get("task_index"));
        }
        return m;
    }

    static float[] floats(double[] d) {
        float[] f = new float[d.length];
        for (int i = 0; i < d.length; i++) {
            f[i] = (float) d[i];
        }
        return f;
    }

    static float[] floats(List<?> l) {
        float[] f = new float[l.size()];
        for (int i = 0; i < f.length; i++) {
            f[i] = ((Number) l.get(i)).floatValue();
        }
        return f;
    }

    static float[] floats(JsonNode a) {
        float[] f = new float[a.size()];
        for (int i = 0; i < f.length; i++) {
            f[i] = (float) a.get(i).asDouble();
        }
        return f;
    }

    static List<String> iterable(java.util.Iterator<String> it) {
        List<String> l = new ArrayList<>();
        it.forEachRemaining(l::add);
        return l;
    }

    /** PSNR in dB of b against a over all RGB samples. */
    static double psnr(RgbImage a, RgbImage b) {
        assertEquals(a.width(), b.width());
        assertEquals(a.height(), b.height());
        double se = 0;
        byte[] pa = a.pixels();
        byte[] pb = b.pixels();
        for (int i = 0; i < pa.length; i++) {
            double d = (pa[i] & 0xFF) - (pb[i] & 0xFF);
            se += d * d;
        }
        double mse = se / pa.length;
        return mse == 0 ? 99 : 10 * Math.log10(255.0 * 255.0 / mse);
    }

}
