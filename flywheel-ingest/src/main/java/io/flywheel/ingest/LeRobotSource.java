package io.flywheel.ingest;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Reads a LeRobotDataset folder (Hugging Face LeRobot, codebase versions {@code v2.0}, {@code v2.1} and
 * {@code v3.0}) as one recording with one episode per LeRobot episode.
 *
 * <p>Layouts, from {@code meta/info.json}'s {@code codebase_version}, {@code data_path} and {@code video_path}:
 * <ul>
 *   <li>v3.0: many episodes per file. {@code meta/episodes/chunk-CCC/file-FFF.parquet} gives per episode
 *       {@code episode_index}, {@code tasks}, {@code length}, {@code data/chunk_index}, {@code data/file_index},
 *       {@code dataset_from_index} / {@code dataset_to_index} (the global {@code index} range, end exclusive), and per
 *       video key {@code videos/KEY/chunk_index}, {@code file_index}, {@code from_timestamp} (seconds in the MP4);
 *       tasks are {@code meta/tasks.parquet} (the task string as column {@code task} or pandas index
 *       {@code __index_level_0__}, and {@code task_index}).</li>
 *   <li>v2.x: one file per episode, {@code data/chunk-CCC/episode_EEEEEE.parquet} and
 *       {@code videos/chunk-CCC/KEY/episode_EEEEEE.mp4} with {@code CCC = episode_index / chunks_size};
 *       episodes are {@code meta/episodes.jsonl} ({@code episode_index}, {@code tasks}, {@code length}), tasks
 *       {@code meta/tasks.jsonl} ({@code task_index}, {@code task}).</li>
 * </ul>
 *
 * <p>Streams of an episode (topic = feature key), one message per data row: every {@code dtype: video} feature is a
 * CAMERA whose locator is the byte range of the MP4 sample presented at {@code from_timestamp + timestamp} (nearest
 * sample within half a frame period; the codec is the MP4's own sample entry, {@code avc1}/{@code hvc1}, whatever
 * info.json's {@code video.codec} says); {@code observation.state} is STATE and {@code action} ACTION, their values
 * copied into the rows (float32 widened to double) with the feature's {@code names} as value names; every other
 * numeric feature is OTHER with values. A robot profile that names roles overrides these guesses. {@code dtype:
 * image} features (images inside the Parquet) are not located and are named in
 * {@code lerobot.skipped_features}.
 *
 * <p>Times: LeRobot keeps times relative to the episode ({@code timestamp}, seconds). Episode at position {@code e}
 * gets log times {@code epochNs + e * spacing + round(timestamp * 1e9)} with the options' RLDS epoch and spacing
 * (spacing widened to a whole second past the longest episode), so times stay real within an episode.
 *
 * <p>Episode metadata: {@code task} (the task of the first frame's {@code task_index}, else the episode's first
 * task), {@code lerobot.tasks} (all, newline separated), {@code lerobot.episode_index}, {@code lerobot.data_file}
 * (relative), {@code lerobot.data_rows} ({@code FROM-TO}: the rows of the data file holding frames 0..n-1, in order,
 * so lake frame {@code k} is row {@code FROM + k}), {@code lerobot.dataset_from_index}, per camera
 * {@code lerobot.video.KEY} (relative MP4) and {@code lerobot.video.KEY.from_timestamp}, per numeric feature with names
 * {@code lerobot.names.KEY} (comma separated); {@code robot_id} from {@code robot_type}; and the dataset's
 * {@code lerobot.codebase_version}, {@code lerobot.fps}, {@code lerobot.robot_type}, {@code lerobot.total_episodes},
 * {@code lerobot.skipped_features} and, where info.json's codec is not the MP4's, {@code lerobot.video.KEY.codec}.
 */
final class LeRobotSource {
    /** The message type of LeRobot streams: {@code lerobot/} + the feature's dtype. */
    static final String TYPE_PREFIX = "lerobot/";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern FIELD = Pattern.compile("\\{([a-z_]+)(?::0?(\\d+)d)?\\}");
    private static final Set<String> BOOKKEEPING = Set.of("timestamp", "frame_index", "episode_index", "index",
            "task_index");

    private LeRobotSource() {}

    /** @return whether a folder is a LeRobot dataset: it holds {@code meta/info.json} */
    static boolean isDataset(Path folder) {
        return Files.isRegularFile(folder.resolve("meta").resolve("info.json"));
    }

    /** @return whether a folder looks like a LeRobot dataset that lacks its info.json (meta/ and data/, no info) */
    static boolean lacksInfo(Path folder) {
        return Files.isDirectory(folder.resolve("meta")) && Files.isDirectory(folder.resolve("data"))
                && !isDataset(folder);
    }

    /** @return every regular file under meta/, data/ and videos/, sorted by relative path */
    static List<Path> files(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        for (String d : List.of("meta", "data", "videos")) {
            Path p = root.resolve(d);
            if (!Files.isDirectory(p)) continue;
            try (Stream<Path> s = Files.walk(p)) {
                s.filter(Files::isRegularFile).forEach(out::add);
            }
        }
        out.sort((a, b) -> root.relativize(a).toString().compareTo(root.relativize(b).toString()));
        return out;
    }

    /** What {@link #read} found: one collector per episode, in episode order, and recording metadata. */
    record Dataset(List<Collector> episodes, Map<String, String> metadata) {}

    /** One episode as the metadata describe it. */
    private record Meta(long index, List<String> tasks, long length, Path dataFile, long fromIndex, long toIndex,
                        Map<String, Path> videos, Map<String, Double> fromTimestamp, String where) {}

    /** A feature of info.json. */
    /** @param width the declared shape's size (its product), -1 when info.json gives none */
    private record Feature(String key, String dtype, List<String> names, String declaredCodec, int width) {}

    /**
     * Reads a dataset.
     *
     * @param root the dataset folder
     * @param profile the robot profile (roles), or the default
     * @param opts epoch and episode spacing of the nominal timeline
     * @return the episodes
     * @throws IngestException naming the file, the position (row, line, episode, frame) and what was expected, for a
     *     missing or broken info.json, episodes or tasks file, a missing or truncated data file, an episode whose
     *     rows differ from its length, a video that is not H.264 / H.265 or has no sample for a frame
     * @throws IOException when reading fails
     */
    static Dataset read(Path root, RobotProfile profile, IngestOptions opts) throws IOException {
        Path infoFile = root.resolve("meta").resolve("info.json");
        if (!Files.isRegularFile(infoFile)) {
            throw new IngestException(infoFile.toString(), -1, "missing: a LeRobot dataset needs meta/info.json"
                    + " (codebase_version, fps, features, data_path)");
        }
        JsonNode info = json(infoFile, Files.readString(infoFile), -1);
        String version = text(info, "codebase_version", infoFile);
        boolean v3 = version.startsWith("v3");
        if (!v3 && !version.startsWith("v2")) {
            throw new IngestException(infoFile.toString(), -1, "codebase_version '" + version + "': expected v2.0,"
                    + " v2.1 or v3.0");
        }
        JsonNode fpsNode = info.get("fps");
        if (fpsNode == null || !fpsNode.isNumber() || fpsNode.asDouble() <= 0) {
            throw new IngestException(infoFile.toString(), -1, "fps: expected a positive number, found " + fpsNode);
        }
        double fps = fpsNode.asDouble();
        String dataPath = text(info, "data_path", infoFile);
        String videoPath = info.path("video_path").isTextual() ? info.get("video_path").asText() : null;
        long chunksSize = info.path("chunks_size").asLong(1000);
        if (chunksSize <= 0) chunksSize = 1000;
        if (!(info.get("features") instanceof com.fasterxml.jackson.databind.node.ObjectNode fs)) {
            throw new IngestException(infoFile.toString(), -1, "features: expected an object of feature key -> dtype,"
                    + " shape, names");
        }
        List<Feature> cameras = new ArrayList<>();
        List<Feature> vectors = new ArrayList<>();
        List<String> skippedFeatures = new ArrayList<>();
        var it = fs.fields();
        while (it.hasNext()) {
            var e = it.next();
            String key = e.getKey();
            String dtype = e.getValue().path("dtype").asText("");
            if (dtype.equals("video")) {
                JsonNode vi = e.getValue().path("info");
                if (vi.isMissingNode() || vi.isNull()) vi = e.getValue().path("video_info");
                cameras.add(new Feature(key, dtype, List.of(), vi.path("video.codec").asText(""), -1));
            } else if (BOOKKEEPING.contains(key)) {
                continue;
            } else if (dtype.startsWith("float") || dtype.startsWith("int") || dtype.equals("bool")) {
                vectors.add(new Feature(key, dtype, names(e.getValue().get("names")), "", width(e.getValue().get("shape"))));
            } else {
                skippedFeatures.add(key + " (" + dtype + ")");
            }
        }
        if (!cameras.isEmpty() && videoPath == null) {
            throw new IngestException(infoFile.toString(), -1, "features " + cameras.get(0).key() + " ... are video,"
                    + " but video_path is missing: expected a path template");
        }
        Map<Long, String> tasks = v3 ? tasksV3(root) : tasksV2(root);
        List<Meta> metas = v3 ? episodesV3(root, dataPath, videoPath, cameras)
                : episodesV2(root, dataPath, videoPath, cameras, chunksSize);
        long declared = info.path("total_episodes").asLong(-1);
        if (declared >= 0 && declared != metas.size()) {
            throw new IngestException(infoFile.toString(), -1, "total_episodes is " + declared + ", but the episodes"
                    + " metadata list " + metas.size() + "; expected the same count (a missing episodes file?)");
        }
        Map<String, String> recMeta = new LinkedHashMap<>();
        recMeta.put("lerobot.codebase_version", version);
        recMeta.put("lerobot.fps", fmt(fps));
        if (info.path("robot_type").isTextual()) recMeta.put("lerobot.robot_type", info.get("robot_type").asText());
        recMeta.put("lerobot.total_episodes", Integer.toString(metas.size()));
        if (!skippedFeatures.isEmpty()) recMeta.put("lerobot.skipped_features", String.join(", ", skippedFeatures));

        Set<String> wanted = new LinkedHashSet<>(BOOKKEEPING);
        vectors.forEach(f -> wanted.add(f.key()));
        Map<Path, ParquetRows> dataCache = new HashMap<>();
        Map<Path, Map<Long, int[]>> rowsByEpisode = new HashMap<>();
        Map<Path, Mp4SampleTable> videoCache = new HashMap<>();
        Map<Path, long[][]> videoOrder = new HashMap<>();
        long maxDurationNs = 0;
        List<Collector> out = new ArrayList<>();
        List<long[]> relTimes = new ArrayList<>();
        for (Meta m : metas) {
            ParquetRows data = dataCache.get(m.dataFile());
            if (data == null) {
                if (!Files.isRegularFile(m.dataFile())) {
                    throw new IngestException(m.dataFile().toString(), -1, "missing: " + m.where() + " (episode "
                            + m.index() + ") has its frames here; expected a Parquet file");
                }
                // one data file at a time in memory (v3 files hold many consecutive episodes)
                dataCache.clear();
                data = ParquetRows.read(m.dataFile(), wanted);
                dataCache.put(m.dataFile(), data);
                rowsByEpisode.put(m.dataFile(), groupByEpisode(data));
            }
            int[] rows = rowsByEpisode.get(m.dataFile()).getOrDefault(m.index(), new int[0]);
            if (rows.length != m.length()) {
                throw new IngestException(m.dataFile().toString(), -1, "episode " + m.index() + ": " + rows.length
                        + " rows, but " + m.where() + " says length " + m.length() + "; expected one row per frame");
            }
            for (int k = 0; k < rows.length; k++) {
                if (k > 0 && rows[k] != rows[k - 1] + 1) {
                    throw new IngestException(m.dataFile().toString(), -1, "episode " + m.index() + ": rows "
                            + rows[k - 1] + " and " + rows[k] + " are not adjacent; expected an episode's frames in"
                            + " consecutive rows");
                }
                long fi = data.integer("frame_index", rows[k]);
                if (fi != k) {
                    throw new IngestException(m.dataFile().toString(), -1, "row " + rows[k] + " (episode "
                            + m.index() + "): frame_index " + fi + ", expected " + k);
                }
            }
            if (m.fromIndex() >= 0 && rows.length > 0) {
                long first = data.integer("index", rows[0]);
                if (first != m.fromIndex() || m.toIndex() - m.fromIndex() != rows.length) {
                    throw new IngestException(m.dataFile().toString(), -1, "episode " + m.index() + ": rows have index "
                            + first + ".." + (first + rows.length) + ", but " + m.where() + " says dataset_from_index "
                            + m.fromIndex() + ", dataset_to_index " + m.toIndex());
                }
            }
            long[] rel = new long[rows.length];
            for (int k = 0; k < rows.length; k++) {
                rel[k] = Math.round(data.number("timestamp", rows[k]) * 1e9);
                if (k > 0 && rel[k] <= rel[k - 1]) {
                    throw new IngestException(m.dataFile().toString(), -1, "row " + rows[k] + " (episode " + m.index()
                            + ", frame " + k + "): timestamp " + fmt(rel[k] / 1e9) + " s is not after the previous "
                            + fmt(rel[k - 1] / 1e9) + " s; expected increasing times");
                }
            }
            if (rel.length > 0) maxDurationNs = Math.max(maxDurationNs, rel[rel.length - 1] - rel[0]);
            relTimes.add(rel);
            Collector c = new Collector(profile);
            int channel = 0;
            for (Feature cam : cameras) {
                Path mp4 = m.videos().get(cam.key());
                if (!Files.isRegularFile(mp4)) {
                    throw new IngestException(mp4.toString(), -1, "missing: the video of " + cam.key() + " for episode "
                            + m.index() + " (" + m.where() + "); expected an MP4 file");
                }
                Mp4SampleTable t = videoCache.get(mp4);
                if (t == null) {
                    t = Mp4SampleTable.read(mp4);
                    videoCache.put(mp4, t);
                    videoOrder.put(mp4, presentationOrder(t));
                    String declaredCodec = cam.declaredCodec().toLowerCase(Locale.ROOT);
                    boolean same = declaredCodec.isEmpty() || declaredCodec.equals(t.format())
                            || declaredCodec.equals("avc1") && t.format().equals("h264")
                            || (declaredCodec.equals("hevc") || declaredCodec.equals("hvc1")) && t.format().equals("h265");
                    if (!same) {
                        recMeta.put("lerobot.video." + cam.key() + ".codec", t.format() + " (info.json says "
                                + cam.declaredCodec() + "; the MP4's sample entry is used)");
                    }
                }
                String uri = opts.rawFiles().uri(mp4);
                long[][] order = videoOrder.get(mp4);
                double from = m.fromTimestamp().getOrDefault(cam.key(), 0.0);
                long fromNs = Math.round(from * 1e9);
                long half = Math.round(0.5e9 / fps);
                StreamBuilder sb = c.stream(cam.key(), ++channel, TYPE_PREFIX + "video", StreamRole.CAMERA);
                for (int k = 0; k < rel.length; k++) {
                    long want = fromNs + rel[k];
                    int s = nearest(order[0], want);
                    if (s < 0 || Math.abs(order[0][s] - want) > half) {
                        long last = order[0].length == 0 ? 0 : order[0][order[0].length - 1];
                        throw new IngestException(mp4.toString(), -1, "episode " + m.index() + ", frame " + k + ": no"
                                + " video sample presented at " + fmt(want / 1e9) + " s (from_timestamp "
                                + fmt(from) + " + timestamp " + fmt(rel[k] / 1e9) + "); the video has "
                                + order[0].length + " samples, the last at " + fmt(last / 1e9) + " s: shorter than the"
                                + " episode's " + rel.length + " frames (expected a sample within " + fmt(half / 1e9)
                                + " s)");
                    }
                    Mp4SampleTable.Sample smp = t.samples().get((int) order[1][s]);
                    int i = sb.add(0, 0); // times set below, once the timeline is known
                    sb.locator(i, new RawLocator(uri, -1, smp.offset(), smp.size(), "", t.format(), t.width(),
                            t.height()));
                }
                c.episodeMetadata.put("lerobot.video." + cam.key(), rel(root, mp4));
                c.episodeMetadata.put("lerobot.video." + cam.key() + ".from_timestamp", fmt(from));
            }
            for (Feature f : vectors) {
                if (!data.has(f.key())) {
                    throw new IngestException(m.dataFile().toString(), -1, "no column '" + f.key() + "', which"
                            + " meta/info.json lists as a " + f.dtype() + " feature");
                }
                StreamRole guess = f.key().equals("observation.state") ? StreamRole.STATE
                        : f.key().equals("action") ? StreamRole.ACTION : StreamRole.OTHER;
                StreamBuilder sb = c.stream(f.key(), ++channel, TYPE_PREFIX + f.dtype(), guess);
                Object[] col = data.column(f.key());
                for (int k = 0; k < rows.length; k++) {
                    int i = sb.add(0, 0);
                    Object v = col[rows[k]];
                    if (v == null) {
                        throw new IngestException(m.dataFile().toString(), -1, "row " + rows[k] + ", column '" + f.key()
                                + "': null; expected a value for every frame");
                    }
                    double[] values = v instanceof double[] d ? d : new double[] {((Number) v).doubleValue()};
                    int width = f.width() >= 0 ? f.width() : f.names().isEmpty() ? -1 : f.names().size();
                    if (width >= 0 && values.length != width) {
                        throw new IngestException(m.dataFile().toString(), -1, "row " + rows[k] + ", column '" + f.key()
                                + "': " + values.length + " values, but meta/info.json declares " + width + " (shape "
                                + (f.width() >= 0 ? "[" + f.width() + "]" : "none") + ", " + f.names().size() + " names)");
                    }
                    sb.value(i, values);
                }
                sb.names(f.names());
                if (!f.names().isEmpty()) c.episodeMetadata.put("lerobot.names." + f.key(), String.join(",", f.names()));
            }
            String task = "";
            if (rows.length > 0 && data.has("task_index") && data.column("task_index")[rows[0]] != null) {
                task = tasks.getOrDefault(data.integer("task_index", rows[0]), "");
            }
            if (task.isEmpty() && !m.tasks().isEmpty()) task = m.tasks().get(0);
            if (!task.isEmpty()) c.episodeMetadata.put("task", task);
            c.episodeMetadata.put("lerobot.tasks", String.join("\n", m.tasks()));
            c.episodeMetadata.put("lerobot.episode_index", Long.toString(m.index()));
            c.episodeMetadata.put("lerobot.data_file", rel(root, m.dataFile()));
            if (rows.length > 0) c.episodeMetadata.put("lerobot.data_rows", rows[0] + "-" + (rows[rows.length - 1] + 1));
            if (m.fromIndex() >= 0) c.episodeMetadata.put("lerobot.dataset_from_index", Long.toString(m.fromIndex()));
            if (recMeta.containsKey("lerobot.robot_type")) c.episodeMetadata.put("robot_id", recMeta.get("lerobot.robot_type"));
            c.recordingMetadata.putAll(recMeta);
            out.add(c);
        }
        long spacing = Math.max(opts.rldsEpisodeSpacingNs(), (maxDurationNs / 1_000_000_000L + 1) * 1_000_000_000L);
        List<Collector> timed = new ArrayList<>();
        for (int e = 0; e < out.size(); e++) {
            Collector c = retime(out.get(e), opts.rldsEpochNs() + e * spacing, relTimes.get(e));
            recMeta.forEach(c.episodeMetadata::putIfAbsent); // the lake keeps episode metadata, not the recording's
            timed.add(c);
        }
        return new Dataset(timed, recMeta);
    }

    /** A copy of a collector's streams with message {@code k} at {@code t0 + rel[k]}. */
    private static Collector retime(Collector c, long t0, long[] rel) {
        Collector out = new Collector(c.profile);
        out.episodeMetadata.putAll(c.episodeMetadata);
        out.recordingMetadata.putAll(c.recordingMetadata);
        for (StreamBuilder s : c.streams.values()) {
            StreamBuilder sb = out.stream(s.topic, s.channelId, s.messageType, s.role);
            for (int k = 0; k < s.size(); k++) {
                int i = sb.add(t0 + rel[k], 0);
                if (s.locatorAt(k) != null) sb.locator(i, s.locatorAt(k));
                if (s.valueAt(k) != null) sb.value(i, s.valueAt(k));
            }
            sb.names(s.names());
        }
        return out;
    }

    /** @return {presentation ns sorted, sample index} of an MP4's samples */
    private static long[][] presentationOrder(Mp4SampleTable t) {
        int n = t.samples().size();
        Integer[] idx = new Integer[n];
        for (int i = 0; i < n; i++) idx[i] = i;
        Arrays.sort(idx, (a, b) -> Long.compare(t.samples().get(a).presentationNs(), t.samples().get(b).presentationNs()));
        long[][] o = new long[2][n];
        for (int i = 0; i < n; i++) {
            o[0][i] = t.samples().get(idx[i]).presentationNs();
            o[1][i] = idx[i];
        }
        return o;
    }

    /** @return the position of the value nearest {@code want} in a sorted array, -1 when empty */
    private static int nearest(long[] sorted, long want) {
        if (sorted.length == 0) return -1;
        int p = Arrays.binarySearch(sorted, want);
        if (p >= 0) return p;
        int ins = -p - 1;
        if (ins == 0) return 0;
        if (ins == sorted.length) return sorted.length - 1;
        return want - sorted[ins - 1] <= sorted[ins] - want ? ins - 1 : ins;
    }

    private static Map<Long, int[]> groupByEpisode(ParquetRows data) throws IngestException {
        Map<Long, List<Integer>> m = new TreeMap<>();
        for (int r = 0; r < data.rows(); r++) m.computeIfAbsent(data.integer("episode_index", r), k -> new ArrayList<>()).add(r);
        Map<Long, int[]> out = new HashMap<>();
        m.forEach((k, v) -> out.put(k, v.stream().mapToInt(Integer::intValue).toArray()));
        return out;
    }

    private static Map<Long, String> tasksV3(Path root) throws IOException {
        Path f = root.resolve("meta").resolve("tasks.parquet");
        Map<Long, String> out = new HashMap<>();
        if (!Files.isRegularFile(f)) {
            throw new IngestException(f.toString(), -1, "missing: a v3.0 dataset lists its tasks here (task_index,"
                    + " task); expected a Parquet file");
        }
        ParquetRows t = ParquetRows.read(f, null);
        String textColumn = t.has("task") ? "task" : t.has("__index_level_0__") ? "__index_level_0__" : null;
        if (textColumn == null) {
            for (String c : t.names()) {
                if (t.rows() > 0 && t.column(c)[0] instanceof String) {
                    textColumn = c;
                    break;
                }
            }
        }
        if (textColumn == null || !t.has("task_index")) {
            throw new IngestException(f.toString(), -1, "expected columns task_index and task (or the pandas index"
                    + " __index_level_0__); found " + String.join(", ", t.names()));
        }
        for (int r = 0; r < t.rows(); r++) out.put(t.integer("task_index", r), String.valueOf(t.column(textColumn)[r]));
        return out;
    }

    /** One non-blank line of a JSON Lines file, parsed. */
    private record JsonLine(int line, JsonNode node) {}

    /**
     * @return the non-blank lines of a JSON Lines file, parsed, with their 1-based line numbers
     * @throws IngestException naming the file and line of one that is not JSON
     */
    private static List<JsonLine> jsonLines(Path f) throws IOException {
        List<JsonLine> out = new ArrayList<>();
        int line = 0;
        try (BufferedReader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
            String s;
            while ((s = r.readLine()) != null) {
                line++;
                if (!s.isBlank()) {
                    out.add(new JsonLine(line, json(f, s, line)));
                }
            }
        }
        return out;
    }

    private static Map<Long, String> tasksV2(Path root) throws IOException {
        Path f = root.resolve("meta").resolve("tasks.jsonl");
        Map<Long, String> out = new HashMap<>();
        if (!Files.isRegularFile(f)) return out; // tasks are also in episodes.jsonl
        for (JsonLine l : jsonLines(f)) {
            JsonNode n = l.node();
            if (!n.path("task_index").canConvertToLong() || !n.path("task").isTextual()) {
                throw new IngestException(f.toString(), -1, "line " + l.line() + ": expected {\"task_index\": N,"
                        + " \"task\": TEXT}");
            }
            out.put(n.get("task_index").asLong(), n.get("task").asText());
        }
        return out;
    }

    private static List<Meta> episodesV2(Path root, String dataPath, String videoPath, List<Feature> cameras,
                                         long chunksSize) throws IOException {
        Path f = root.resolve("meta").resolve("episodes.jsonl");
        if (!Files.isRegularFile(f)) {
            throw new IngestException(f.toString(), -1, "missing: a v2.x dataset lists its episodes here"
                    + " (episode_index, tasks, length); expected a JSON Lines file");
        }
        List<Meta> out = new ArrayList<>();
        for (JsonLine l : jsonLines(f)) {
            int line = l.line();
            JsonNode n = l.node();
            if (!n.path("episode_index").canConvertToLong() || !n.path("length").canConvertToLong()) {
                throw new IngestException(f.toString(), -1, "line " + line + ": expected {\"episode_index\": N,"
                        + " \"tasks\": [...], \"length\": N}");
            }
            long e = n.get("episode_index").asLong();
            List<String> tasks = new ArrayList<>();
            n.path("tasks").forEach(t -> tasks.add(t.asText()));
            Map<String, Object> vars = Map.of("episode_chunk", e / chunksSize, "episode_index", e,
                    "chunk_index", e / chunksSize);
            Map<String, Path> videos = new LinkedHashMap<>();
            for (Feature cam : cameras) {
                Map<String, Object> vv = new HashMap<>(vars);
                vv.put("video_key", cam.key());
                videos.put(cam.key(), root.resolve(format(videoPath, vv, f, line)));
            }
            out.add(new Meta(e, tasks, n.get("length").asLong(), root.resolve(format(dataPath, vars, f, line)), -1,
                    -1, videos, Map.of(), "meta/episodes.jsonl line " + line));
        }
        return out;
    }

    private static List<Meta> episodesV3(Path root, String dataPath, String videoPath, List<Feature> cameras)
            throws IOException {
        Path dir = root.resolve("meta").resolve("episodes");
        List<Path> files = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.filter(p -> Files.isRegularFile(p) && p.toString().endsWith(".parquet")).sorted().forEach(files::add);
            }
        }
        if (files.isEmpty()) {
            throw new IngestException(dir.toString(), -1, "missing: a v3.0 dataset lists its episodes in"
                    + " meta/episodes/chunk-CCC/file-FFF.parquet; expected at least one Parquet file");
        }
        List<Meta> out = new ArrayList<>();
        for (Path f : files) {
            ParquetRows t = ParquetRows.read(f, null);
            for (int r = 0; r < t.rows(); r++) {
                long e = t.integer("episode_index", r);
                String where = rel(root, f) + " row " + r;
                List<String> tasks = new ArrayList<>();
                Object tv = t.has("tasks") ? t.column("tasks")[r] : null;
                if (tv instanceof String[] ts) tasks.addAll(Arrays.asList(ts));
                else if (tv instanceof String s) tasks.add(s);
                Map<String, Object> vars = Map.of("chunk_index", t.integer("data/chunk_index", r),
                        "file_index", t.integer("data/file_index", r), "episode_index", e);
                Map<String, Path> videos = new LinkedHashMap<>();
                Map<String, Double> from = new LinkedHashMap<>();
                for (Feature cam : cameras) {
                    String k = "videos/" + cam.key() + "/";
                    Map<String, Object> vv = Map.of("video_key", cam.key(), "chunk_index",
                            t.integer(k + "chunk_index", r), "file_index", t.integer(k + "file_index", r),
                            "episode_index", e);
                    videos.put(cam.key(), root.resolve(format(videoPath, vv, f, r)));
                    from.put(cam.key(), t.number(k + "from_timestamp", r));
                }
                out.add(new Meta(e, tasks, t.integer("length", r), root.resolve(format(dataPath, vars, f, r)),
                        t.integer("dataset_from_index", r), t.integer("dataset_to_index", r), videos, from, where));
            }
        }
        out.sort((a, b) -> Long.compare(a.index(), b.index()));
        return out;
    }

    /** Fills a Python format template such as {@code data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet}. */
    static String format(String template, Map<String, Object> vars, Path from, int at) throws IngestException {
        Matcher m = FIELD.matcher(template);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            Object v = vars.get(m.group(1));
            if (v == null) {
                throw new IngestException(from.toString(), -1, "path template '" + template + "' names {" + m.group(1)
                        + "}; expected only " + String.join(", ", new java.util.TreeSet<>(vars.keySet())));
            }
            String s = m.group(2) == null ? String.valueOf(v)
                    : String.format(Locale.ROOT, "%0" + m.group(2) + "d", ((Number) v).longValue());
            m.appendReplacement(sb, Matcher.quoteReplacement(s));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** @return the number of values a feature's {@code shape} declares (the product of its sizes), -1 when none */
    private static int width(JsonNode shape) {
        if (shape == null || !shape.isArray() || shape.isEmpty()) return -1;
        int n = 1;
        for (JsonNode d : shape) {
            if (!d.canConvertToInt() || d.asInt() < 0) return -1;
            n *= d.asInt();
        }
        return n;
    }

    private static List<String> names(JsonNode n) {
        if (n == null || n.isNull()) return List.of();
        if (n.isObject() && n.size() == 1) n = n.elements().next(); // v2.x: {"motors": [...]}
        List<String> out = new ArrayList<>();
        if (n.isArray()) {
            for (JsonNode x : n) {
                if (!x.isTextual()) return List.of();
                out.add(x.asText());
            }
        }
        return out;
    }

    private static JsonNode json(Path f, String s, int line) throws IngestException {
        try {
            return JSON.readTree(s);
        } catch (JsonProcessingException e) {
            String where = line >= 0 ? "line " + line + ": " : e.getLocation() == null ? ""
                    : "line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ": ";
            throw new IngestException(f.toString(), -1, where + "not valid JSON: " + e.getOriginalMessage());
        }
    }

    private static String text(JsonNode info, String field, Path f) throws IngestException {
        JsonNode v = info.get(field);
        if (v == null || !v.isTextual()) {
            throw new IngestException(f.toString(), -1, field + ": expected a string, found " + v);
        }
        return v.asText();
    }

    private static String rel(Path root, Path p) {
        return root.toAbsolutePath().normalize().relativize(p.toAbsolutePath().normalize()).toString();
    }

    private static String fmt(double d) {
        if (d == Math.rint(d) && Math.abs(d) < 1e15) return Long.toString((long) d);
        return new java.math.BigDecimal(String.format(Locale.ROOT, "%.6f", d)).stripTrailingZeros().toPlainString();
    }
}
