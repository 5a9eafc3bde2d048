package io.flywheel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.video.EncoderOptions;
import io.flywheel.enrich.video.Mp4VideoWriter;
import io.flywheel.ingest.Ingest;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.Mp4SampleTable;
import io.flywheel.ingest.ParquetRows;
import io.flywheel.ingest.Recording;
import io.flywheel.ingest.Sources;

/**
 * LeRobot import rate against a plain read of the same data, one JVM, single-threaded. Writes a LeRobotDataset v3.0
 * folder (E episodes of F frames at 30 fps in one data file, 14-dim float32 state and action, one 64x48 H.264 camera
 * in one MP4) with Apache Parquet Java, then takes turns ({@code warmup} untimed rounds, then {@code runs} timed; the
 * median is reported):
 * <ul>
 *   <li>{@code plain}: the data Parquet read into Java values ({@link ParquetRows}, every column) and the MP4's sample
 *       table read ({@link Mp4SampleTable}): the least any import must do;</li>
 *   <li>{@code import}: {@link Ingest#read} of the folder: metadata, data, video sample lookup per frame, SHA-256 of
 *       every file, the episode model with timestamp reports (no lake commit).</li>
 * </ul>
 * Prints one JSON line per mode: frames/s.
 *
 * <p>usage: {@code LeRobotImportBench [EPISODES] [FRAMES] [RUNS]} (defaults 20, 500, 5)
 */
public final class LeRobotImportBench {
    private static final int FPS = 30;
    private static final int DIM = 14;

    private LeRobotImportBench() {}

    public static void main(String[] args) throws Exception {
        int episodes = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int frames = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        Path root = Files.createTempDirectory("lerobot-bench");
        try {
            write(root, episodes, frames);
            long total = (long) episodes * frames;
            Path data = root.resolve("data/chunk-000/file-000.parquet");
            Path mp4 = root.resolve("videos/observation.images.top/chunk-000/file-000.mp4");
            Map<String, List<Double>> times = new LinkedHashMap<>();
            times.put("plain", new ArrayList<>());
            times.put("import", new ArrayList<>());
            for (int r = 0; r < 2 + runs; r++) {
                long t0 = System.nanoTime();
                ParquetRows rows = ParquetRows.read(data, null);
                Mp4SampleTable t = Mp4SampleTable.read(mp4);
                if (rows.rows() != total || t.samples().size() != total) throw new IllegalStateException("bad data");
                long t1 = System.nanoTime();
                Recording rec = Ingest.read(Sources.detect(root), IngestOptions.defaults());
                long n = rec.episodes().stream().mapToLong(e -> e.streams().get(0).size()).sum();
                if (n != total) throw new IllegalStateException("import read " + n + " frames of " + total);
                long t2 = System.nanoTime();
                if (r >= 2) {
                    times.get("plain").add((t1 - t0) / 1e9);
                    times.get("import").add((t2 - t1) / 1e9);
                }
            }
            long bytes;
            try (var s = Files.walk(root)) {
                bytes = s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
            }
            for (var e : times.entrySet()) {
                double[] v = e.getValue().stream().mapToDouble(Double::doubleValue).sorted().toArray();
                double med = v[v.length / 2];
                System.out.printf(Locale.ROOT, "{\"mode\":\"%s\",\"episodes\":%d,\"frames\":%d,\"bytes\":%d,"
                        + "\"median_s\":%.4f,\"frames_per_s\":%.0f,\"runs_s\":%s}%n", e.getKey(), episodes, total, bytes,
                        med, total / med, Arrays.toString(v));
            }
        } finally {
            io.flywheel.lake.LocalFiles.deleteTree(root);
        }
    }

    /** The data file's schema: state and action as lists of float32, timestamp, the four indices. */
    static final MessageType DATA_SCHEMA = Types.buildMessage()
            .requiredList().requiredElement(PrimitiveTypeName.FLOAT).named("observation.state")
            .requiredList().requiredElement(PrimitiveTypeName.FLOAT).named("action")
            .required(PrimitiveTypeName.FLOAT).named("timestamp")
            .required(PrimitiveTypeName.INT64).named("frame_index")
            .required(PrimitiveTypeName.INT64).named("episode_index")
            .required(PrimitiveTypeName.INT64).named("index")
            .required(PrimitiveTypeName.INT64).named("task_index")
            .named("schema");

    /** The data file's rows: E episodes of F frames, state sin(0.01 k + d), action cos(0.01 k + d). */
    static List<Group> dataRows(int episodes, int frames) {
        SimpleGroupFactory f = new SimpleGroupFactory(DATA_SCHEMA);
        List<Group> rows = new ArrayList<>();
        for (int e = 0; e < episodes; e++) {
            for (int k = 0; k < frames; k++) {
                Group g = f.newGroup();
                Group s = g.addGroup("observation.state");
                Group a = g.addGroup("action");
                for (int d = 0; d < DIM; d++) {
                    s.addGroup("list").append("element", (float) Math.sin(0.01 * k + d));
                    a.addGroup("list").append("element", (float) Math.cos(0.01 * k + d));
                }
                rows.add(g.append("timestamp", k / (float) FPS).append("frame_index", (long) k)
                        .append("episode_index", (long) e).append("index", (long) e * frames + k).append("task_index", 0L));
            }
        }
        return rows;
    }

    /**
     * Writes the LeRobotDataset v3.0 folder: info.json, tasks and episodes Parquet, the data Parquet and the
     * MP4 of camera {@code observation.images.top} (64x48, frame i filled with the gray level i mod 256).
     */
    static void write(Path root, int episodes, int frames) throws IOException {
        MessageType schema = DATA_SCHEMA;
        List<Group> rows = dataRows(episodes, frames);
        write(root.resolve("data/chunk-000/file-000.parquet"), schema, rows);
        MessageType tasks = Types.buildMessage().required(PrimitiveTypeName.INT64).named("task_index")
                .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("task").named("schema");
        write(root.resolve("meta/tasks.parquet"), tasks,
                List.of(new SimpleGroupFactory(tasks).newGroup().append("task_index", 0L).append("task", "pick")));
        String v = "videos/observation.images.top/";
        MessageType eps = Types.buildMessage()
                .required(PrimitiveTypeName.INT64).named("episode_index")
                .required(PrimitiveTypeName.INT64).named("length")
                .required(PrimitiveTypeName.INT64).named("data/chunk_index")
                .required(PrimitiveTypeName.INT64).named("data/file_index")
                .required(PrimitiveTypeName.INT64).named("dataset_from_index")
                .required(PrimitiveTypeName.INT64).named("dataset_to_index")
                .required(PrimitiveTypeName.INT64).named(v + "chunk_index")
                .required(PrimitiveTypeName.INT64).named(v + "file_index")
                .required(PrimitiveTypeName.DOUBLE).named(v + "from_timestamp")
                .named("schema");
        SimpleGroupFactory ef = new SimpleGroupFactory(eps);
        List<Group> erows = new ArrayList<>();
        for (int e = 0; e < episodes; e++) {
            erows.add(ef.newGroup().append("episode_index", (long) e).append("length", (long) frames)
                    .append("data/chunk_index", 0L).append("data/file_index", 0L)
                    .append("dataset_from_index", (long) e * frames).append("dataset_to_index", (long) (e + 1) * frames)
                    .append(v + "chunk_index", 0L).append(v + "file_index", 0L)
                    .append(v + "from_timestamp", e * frames / (double) FPS));
        }
        write(root.resolve("meta/episodes/chunk-000/file-000.parquet"), eps, erows);
        Path mp4 = root.resolve(v + "chunk-000/file-000.mp4");
        Files.createDirectories(mp4.getParent());
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 64, 48, EncoderOptions.builder().fps(FPS).build())) {
            byte[] px = new byte[64 * 48 * 3];
            for (int i = 0; i < episodes * frames; i++) {
                Arrays.fill(px, (byte) (i % 256));
                w.write(new RgbImage(64, 48, px.clone()));
            }
        }
        Map<String, Object> vec = Map.of("dtype", "float32", "shape", List.of(DIM), "names", List.of());
        Map<String, Object> features = new LinkedHashMap<>();
        features.put("observation.state", vec);
        features.put("action", vec);
        features.put("observation.images.top", Map.of("dtype", "video", "shape", List.of(48, 64, 3),
                "info", Map.of("video.codec", "h264")));
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("codebase_version", "v3.0");
        info.put("fps", FPS);
        info.put("total_episodes", episodes);
        info.put("data_path", "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet");
        info.put("video_path", "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4");
        info.put("features", features);
        Files.writeString(root.resolve("meta/info.json"), new ObjectMapper().writeValueAsString(info));
    }

    /** One Parquet file of {@code rows} with Snappy pages, replacing {@code file}. */
    static void write(Path file, MessageType schema, List<Group> rows) throws IOException {
        Files.createDirectories(file.getParent());
        try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(schema)
                .withConf(new PlainParquetConfiguration()).withCodecFactory(SNAPPY)
                .withCompressionCodec(CompressionCodecName.SNAPPY).withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
                .build()) {
            for (Group g : rows) w.write(g);
        }
    }

    /** Snappy pages (pyarrow's default) through snappy-java. */
    private static final CompressionCodecFactory SNAPPY = new CompressionCodecFactory() {
        @Override
        public BytesInputCompressor getCompressor(CompressionCodecName codec) {
            return new BytesInputCompressor() {
                @Override
                public BytesInput compress(BytesInput bytes) throws IOException {
                    return BytesInput.from(org.xerial.snappy.Snappy.compress(bytes.toByteArray()));
                }

                @Override
                public CompressionCodecName getCodecName() {
                    return CompressionCodecName.SNAPPY;
                }

                @Override
                public void release() {
                }
            };
        }

        @Override
        public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
            throw new UnsupportedOperationException("write only");
        }

        @Override
        public void release() {
        }
    };
}
