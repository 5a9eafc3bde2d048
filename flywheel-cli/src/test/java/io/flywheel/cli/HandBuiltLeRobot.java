package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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

/**
 * LeRobotDataset folders written independently of the exporter: Parquet files through Apache Parquet Java's example
 * {@link Group} writer (zstd pages for v3.0, uncompressed for v2.1), MP4s through {@link Mp4VideoWriter}.
 *
 * <p>Ground truth: {@link #FPS} 10; episode {@code e} has {@link #LENGTHS}{@code [e]} frames; frame {@code k} of
 * episode {@code e} has {@code timestamp = k / 10}, state {@code [100 e + k + 0.5, -k]}, action {@code [e, k * 0.25]}
 * and task {@link #TASKS}{@code [e]}; frame {@code k}'s image is a flat gray of {@code 40 e + 20 k}. info.json says
 * the videos are {@code av1}; they are H.264.
 */
final class HandBuiltLeRobot {
    static final int FPS = 10;
    static final int[] LENGTHS = {5, 3};
    static final String[] TASKS = {"pick the red cube", "stack the blocks"};
    static final String CAMERA = "observation.images.top";
    static final int W = 64;
    static final int H = 48;
    private static final ObjectMapper JSON = new ObjectMapper();

    private HandBuiltLeRobot() {}

    static double[] state(int e, int k) {
        return new double[] {100 * e + k + 0.5, -k};
    }

    static double[] action(int e, int k) {
        return new double[] {e, k * 0.25};
    }

    private static final MessageType DATA = Types.buildMessage()
            .requiredList().requiredElement(PrimitiveTypeName.FLOAT).named("observation.state")
            .requiredList().requiredElement(PrimitiveTypeName.FLOAT).named("action")
            .required(PrimitiveTypeName.FLOAT).named("timestamp")
            .required(PrimitiveTypeName.INT64).named("frame_index")
            .required(PrimitiveTypeName.INT64).named("episode_index")
            .required(PrimitiveTypeName.INT64).named("index")
            .required(PrimitiveTypeName.INT64).named("task_index")
            .named("schema");

    /** Writes the v3.0 layout: one data file, one MP4 with both episodes, episodes and tasks as Parquet. */
    static void v30(Path root, int videoFrames) throws IOException {
        List<Group> rows = new ArrayList<>();
        SimpleGroupFactory f = new SimpleGroupFactory(DATA);
        int index = 0;
        for (int e = 0; e < LENGTHS.length; e++) {
            for (int k = 0; k < LENGTHS[e]; k++) rows.add(dataRow(f, e, k, index++));
        }
        write(root.resolve("data/chunk-000/file-000.parquet"), DATA, rows, CompressionCodecName.ZSTD);
        MessageType tasks = Types.buildMessage()
                .required(PrimitiveTypeName.INT64).named("task_index")
                .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("__index_level_0__")
                .named("schema");
        SimpleGroupFactory tf = new SimpleGroupFactory(tasks);
        List<Group> trows = new ArrayList<>();
        for (int t = 0; t < TASKS.length; t++) trows.add(tf.newGroup().append("task_index", (long) t).append("__index_level_0__", TASKS[t]));
        write(root.resolve("meta/tasks.parquet"), tasks, trows, CompressionCodecName.ZSTD);
        String v = "videos/" + CAMERA + "/";
        MessageType eps = Types.buildMessage()
                .required(PrimitiveTypeName.INT64).named("episode_index")
                .requiredList().requiredElement(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("tasks")
                .required(PrimitiveTypeName.INT64).named("length")
                .required(PrimitiveTypeName.INT64).named("data/chunk_index")
                .required(PrimitiveTypeName.INT64).named("data/file_index")
                .required(PrimitiveTypeName.INT64).named("dataset_from_index")
                .required(PrimitiveTypeName.INT64).named("dataset_to_index")
                .required(PrimitiveTypeName.INT64).named(v + "chunk_index")
                .required(PrimitiveTypeName.INT64).named(v + "file_index")
                .required(PrimitiveTypeName.DOUBLE).named(v + "from_timestamp")
                .required(PrimitiveTypeName.DOUBLE).named(v + "to_timestamp")
                .named("schema");
        SimpleGroupFactory ef = new SimpleGroupFactory(eps);
        List<Group> erows = new ArrayList<>();
        int from = 0;
        for (int e = 0; e < LENGTHS.length; e++) {
            Group g = ef.newGroup().append("episode_index", (long) e);
            g.addGroup("tasks").addGroup("list").append("element", TASKS[e]);
            g.append("length", (long) LENGTHS[e]).append("data/chunk_index", 0L).append("data/file_index", 0L)
                    .append("dataset_from_index", (long) from).append("dataset_to_index", (long) (from + LENGTHS[e]))
                    .append(v + "chunk_index", 0L).append(v + "file_index", 0L)
                    .append(v + "from_timestamp", from / (double) FPS)
                    .append(v + "to_timestamp", (from + LENGTHS[e]) / (double) FPS);
            erows.add(g);
            from += LENGTHS[e];
        }
        write(root.resolve("meta/episodes/chunk-000/file-000.parquet"), eps, erows, CompressionCodecName.ZSTD);
        List<Integer> grays = new ArrayList<>();
        for (int e = 0; e < LENGTHS.length; e++) for (int k = 0; k < LENGTHS[e]; k++) grays.add(40 * e + 20 * k);
        video(root.resolve(v + "chunk-000/file-000.mp4"), grays.subList(0, Math.min(videoFrames, grays.size())));
        info(root, "v3.0", "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
                "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4", List.of("shoulder", "elbow"));
    }

    /** Writes the v2.1 layout: one data file and one MP4 per episode, episodes and tasks as JSON Lines. */
    static void v21(Path root, int firstVideoFrames) throws IOException {
        SimpleGroupFactory f = new SimpleGroupFactory(DATA);
        int index = 0;
        StringBuilder episodes = new StringBuilder();
        StringBuilder tasks = new StringBuilder();
        for (int e = 0; e < LENGTHS.length; e++) {
            List<Group> rows = new ArrayList<>();
            List<Integer> grays = new ArrayList<>();
            for (int k = 0; k < LENGTHS[e]; k++) {
                rows.add(dataRow(f, e, k, index++));
                grays.add(40 * e + 20 * k);
            }
            write(root.resolve(String.format("data/chunk-000/episode_%06d.parquet", e)), DATA, rows,
                    CompressionCodecName.UNCOMPRESSED);
            video(root.resolve(String.format("videos/chunk-000/%s/episode_%06d.mp4", CAMERA, e)),
                    e == 0 ? grays.subList(0, Math.min(firstVideoFrames, grays.size())) : grays);
            episodes.append(JSON.writeValueAsString(Map.of("episode_index", e, "tasks", List.of(TASKS[e]),
                    "length", LENGTHS[e]))).append('\n');
            tasks.append(JSON.writeValueAsString(Map.of("task_index", e, "task", TASKS[e]))).append('\n');
        }
        Files.createDirectories(root.resolve("meta"));
        Files.writeString(root.resolve("meta/episodes.jsonl"), episodes);
        Files.writeString(root.resolve("meta/tasks.jsonl"), tasks);
        info(root, "v2.1", "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
                "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
                Map.of("motors", List.of("shoulder", "elbow")));
    }

    private static Group dataRow(SimpleGroupFactory f, int e, int k, int index) {
        Group g = f.newGroup();
        Group s = g.addGroup("observation.state");
        for (double x : state(e, k)) s.addGroup("list").append("element", (float) x);
        Group a = g.addGroup("action");
        for (double x : action(e, k)) a.addGroup("list").append("element", (float) x);
        return g.append("timestamp", k / (float) FPS).append("frame_index", (long) k).append("episode_index", (long) e)
                .append("index", (long) index).append("task_index", (long) e);
    }

    private static void info(Path root, String version, String dataPath, String videoPath, Object names)
            throws IOException {
        Map<String, Object> vec = Map.of("dtype", "float32", "shape", List.of(2), "names", names);
        Map<String, Object> video = Map.of("dtype", "video", "shape", List.of(H, W, 3),
                "names", List.of("height", "width", "channels"),
                "info", Map.of("video.codec", "av1", "video.fps", FPS, "video.pix_fmt", "yuv420p"));
        Map<String, Object> scalarF = Map.of("dtype", "float32", "shape", List.of(1));
        Map<String, Object> scalarI = Map.of("dtype", "int64", "shape", List.of(1));
        Map<String, Object> features = new java.util.LinkedHashMap<>();
        features.put("observation.state", vec);
        features.put("action", vec);
        features.put(CAMERA, video);
        features.put("timestamp", scalarF);
        for (String k : List.of("frame_index", "episode_index", "index", "task_index")) features.put(k, scalarI);
        Map<String, Object> info = new java.util.LinkedHashMap<>();
        info.put("codebase_version", version);
        info.put("robot_type", "so100");
        info.put("total_episodes", LENGTHS.length);
        info.put("total_frames", LENGTHS[0] + LENGTHS[1]);
        info.put("total_tasks", TASKS.length);
        info.put("chunks_size", 1000);
        info.put("fps", FPS);
        info.put("splits", Map.of("train", "0:2"));
        info.put("data_path", dataPath);
        info.put("video_path", videoPath);
        info.put("features", features);
        Files.createDirectories(root.resolve("meta"));
        Files.writeString(root.resolve("meta/info.json"), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(info));
    }

    private static void video(Path mp4, List<Integer> grays) throws IOException {
        Files.createDirectories(mp4.getParent());
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, W, H, EncoderOptions.builder().fps(FPS).build())) {
            for (int g : grays) {
                byte[] px = new byte[W * H * 3];
                java.util.Arrays.fill(px, (byte) g);
                w.write(new RgbImage(W, H, px));
            }
        }
    }

    private static void write(Path file, MessageType schema, List<Group> rows, CompressionCodecName codec)
            throws IOException {
        Files.createDirectories(file.getParent());
        try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(schema)
                .withConf(new PlainParquetConfiguration()).withCodecFactory(CODECS).withCompressionCodec(codec)
                .withWriteMode(ParquetFileWriter.Mode.OVERWRITE).build()) {
            for (Group g : rows) w.write(g);
        }
    }

    /** Page compressors without Hadoop: uncompressed and zstd (zstd-jni). */
    private static final CompressionCodecFactory CODECS = new CompressionCodecFactory() {
        @Override
        public BytesInputCompressor getCompressor(CompressionCodecName codec) {
            return new BytesInputCompressor() {
                @Override
                public BytesInput compress(BytesInput bytes) throws IOException {
                    byte[] in = bytes.toByteArray();
                    return BytesInput.from(codec == CompressionCodecName.ZSTD ? com.github.luben.zstd.Zstd.compress(in, 3) : in);
                }

                @Override
                public CompressionCodecName getCodecName() {
                    return codec;
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
