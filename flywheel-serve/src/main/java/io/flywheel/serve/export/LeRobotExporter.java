package io.flywheel.serve.export;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetEpisode;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.video.EncoderOptions;
import io.flywheel.enrich.video.Mp4VideoWriter;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LocalFiles;
import io.flywheel.serve.export.ParquetTable.Column;
import io.flywheel.serve.export.ParquetTable.Kind;
import io.flywheel.serve.loader.CameraImage;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;

/**
 * Writes a training set as a LeRobotDataset v3.0 folder (Hugging Face LeRobot, codebase version
 * "v3.0": {@code lerobot/datasets/lerobot_dataset.py}, {@code utils.py}), readable by
 * {@code LeRobotDataset(repo_id, root=OUT)}:
 *
 * <pre>
 * meta/info.json                          codebase_version, fps, robot_type, features, path templates, totals
 * meta/stats.json                         per feature: min, max, mean, std, count, q01..q99
 * meta/tasks.parquet                      task_index int64, __index_level_0__ (the task text: the pandas index)
 * meta/episodes/chunk-000/file-000.parquet one row per episode (see below)
 * data/chunk-CCC/file-FFF.parquet         one row per frame
 * videos/observation.images.KEY/chunk-CCC/file-FFF.mp4   H.264 yuv420p, episodes concatenated
 * </pre>
 *
 * <p>Data rows: {@code observation.state} and {@code action} (float32 lists, fixed length),
 * {@code timestamp} float32 = frame_index / fps, {@code frame_index} (0-based in the episode),
 * {@code episode_index}, {@code index} (0-based in the dataset), {@code task_index}: int64. The {@code names} of
 * {@code observation.state} and {@code action} in info.json are the episodes' value names ({@code episodes.state_names},
 * {@code action_names}: joint names, field paths, {@code left_follow.joint_1} where two topics share a joint name),
 * {@code state_0..N} where they are unknown. Episode
 * rows: {@code episode_index}, {@code tasks} (list of strings), {@code length},
 * {@code data/chunk_index}, {@code data/file_index}, {@code dataset_from_index},
 * {@code dataset_to_index} (exclusive), per camera {@code videos/KEY/chunk_index},
 * {@code file_index}, {@code from_timestamp}, {@code to_timestamp} (seconds in the MP4), the
 * episode's {@code stats/FEATURE/STAT}, {@code meta/episodes/chunk_index} and {@code file_index}.
 *
 * <p>Timestamps and video: frame {@code i} of an MP4 is presented at exactly {@code i / fps}
 * seconds ({@link Mp4VideoWriter}: time base a multiple of the rate, no B frames), and an
 * episode's {@code from_timestamp} is the presentation time of its first frame in that file, so
 * LeRobot's lookup {@code from_timestamp + timestamp} lands on the frame's own presentation time
 * (to about 1e-7 s, the float32 rounding of {@code timestamp}) where LeRobot's tolerance is 1e-4 s.
 * Episodes never span two files. Images with an odd width or height get one more column / row
 * repeating the last (yuv420p needs even sizes); the feature's shape is the padded size, the size
 * a decoder returns. Images of one camera must all have the same size.
 *
 * <p>The folder is built beside OUT under a temporary name and moved into place at the end, so a
 * failed export leaves no half-written dataset at OUT.
 */
public final class LeRobotExporter {
    /** LeRobot codebase version written to info.json. */
    public static final String CODEBASE_VERSION = "v3.0";
    /** With --resample: 1 on a row that holds the previous sample again (a dropped frame's slot), else 0. */
    public static final String FILLED = "flywheel.filled";
    /** The column pandas stores an unnamed index in (meta/tasks.parquet: the task strings). */
    public static final String PANDAS_INDEX = "__index_level_0__";
    /** Data file path template (LeRobot DEFAULT_DATA_PATH). */
    public static final String DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
    /** Video file path template (LeRobot DEFAULT_VIDEO_PATH). */
    public static final String VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";
    /** Episodes metadata path of the single episodes file written here. */
    public static final String EPISODES_PATH = "meta/episodes/chunk-000/file-000.parquet";

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final int READ_BATCH = 256;

    private LeRobotExporter() {}

    /**
     * Exports a training set.
     *
     * @param lake an open lake
     * @param tag the training set's tag
     * @param out the dataset folder to create
     * @param options fps, robot type, overwrite, video and file-size settings
     * @param progress receives one line per finished episode (done / total, frames/s, ETA); may be a no-op
     * @return what was written
     * @throws io.flywheel.error.NotFoundException for an unknown tag (naming the lake's tags)
     * @throws ExportException for an existing OUT (without force), a set with no
     *     samples, a fractional frame rate without --fps, a sample without state/action or without a
     *     camera's image, or image sizes that change within a camera
     * @throws IOException when reading the lake or writing files fails
     */
    public static LeRobotExportResult export(Lake lake, String tag, Path out, LeRobotExportOptions options,
                                             Consumer<String> progress) throws IOException {
        long t0 = System.nanoTime();
        Trainset set = Trainsets.open(lake, tag); // an unknown tag: NotFoundException, as every tag lookup
        Path target = out.toAbsolutePath().normalize();
        checkTarget(target, options.force());
        if (set.sampleCount() == 0) {
            throw new ExportException("training set '" + tag + "' has no samples: nothing to export");
        }
        List<TrainsetEpisode> episodes = Trainsets.episodes(lake, set);
        Path tmp;
        try { // the dataset is written beside its target, then moved into place
            Files.createDirectories(target.getParent());
            tmp = Files.createTempDirectory(target.getParent(), "." + target.getFileName() + ".export-");
        } catch (IOException e) {
            throw new ExportException("cannot write " + target + ": its folder " + target.getParent() + " cannot be"
                    + " created or written (" + e.getClass().getSimpleName().replace("Exception", "") + ")", e);
        }
        boolean ok = false;
        try (TrainsetLoader loader = TrainsetLoader.open(lake, tag, LoaderOptions.builder().batchSize(READ_BATCH)
                .images(LoaderOptions.Images.DECODED).rawImages(!"hot".equals(options.resolution())).threads(1)
                .prefetch(1).build())) {
            List<TrainsetEpisode> shaped = oneShape(lake, episodes, tag);
            Cameras cams = cameras(lake, tag, shaped, options.fillMissingCameras());
            List<TrainsetEpisode> kept = cams.kept();
            if (!cams.leftOut().isEmpty()) {
                progress.accept("export: " + cams.leftOut().size() + " episode(s) left out: their cameras are not the"
                        + " set's " + cams.topics() + " (pass --missing-camera fill to keep them with black frames): "
                        + String.join(", ", cams.leftOut()));
            }
            if (!options.resample()) {
                refuseGaps(lake, tag, set, kept);
            }
            Writer w = new Writer(tmp, tag, set, kept, cams, loader, options, progress);
            LeRobotExportResult r = w.run();
            // the rate the samples have (what the set achieved, else what it asked for) against the label: a note
            // when they differ by more than 2 %
            Object rate = set.lineage().get("achieved_sample_rate_hz") instanceof Number a ? a
                    : set.lineage().get("sample_rate_hz");
            if (rate instanceof Number hz && hz.doubleValue() > 0
                    && Math.abs(r.fps() / hz.doubleValue() - 1) > 0.02) {
                progress.accept(String.format(Locale.ROOT, "export: note: the set's samples come at %.2f Hz and are"
                        + " labelled %d fps (--fps): its timestamps and videos run %.2fx real time", hz.doubleValue(),
                        r.fps(), r.fps() / hz.doubleValue()));
            }
            Set<String> keptIds = new HashSet<>();
            kept.forEach(ep -> keptIds.add(ep.info().episodeId()));
            List<String> leftOut = episodes.stream().map(ep -> ep.info().episodeId()).filter(id -> !keptIds.contains(id))
                    .toList();
            if (Files.exists(target)) {
                LocalFiles.deleteTree(target);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            try { // createTempDirectory made it owner-only; a dataset folder is for everyone to read
                Files.setPosixFilePermissions(target, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: its default permissions stand
            }
            ok = true;
            return new LeRobotExportResult(target, tag, r.fps(), r.episodes(), r.frames(), r.tasks(), r.cameras(),
                    r.encoder(), r.dataFiles(), r.videoFiles(), treeBytes(target), (System.nanoTime() - t0) / 1e9,
                    r.filledImages(), r.filledVectors(), leftOut, r.filledSlots(), r.mergedSamples(), r.blackImages());
        } finally {
            if (!ok) {
                LocalFiles.deleteTree(tmp);
            }
        }
    }

    private static void checkTarget(Path target, boolean force) throws IOException {
        if (!Files.exists(target)) {
            return;
        }
        if (!Files.isDirectory(target)) {
            throw new ExportException(target + " exists and is not a folder");
        }
        boolean empty;
        try (Stream<Path> s = Files.list(target)) {
            empty = s.findAny().isEmpty();
        }
        if (!force) {
            throw new ExportException(target + " exists; choose a new folder or pass --force to replace it");
        }
        if (!empty && !Files.isRegularFile(target.resolve("meta/info.json"))) {
            throw new ExportException(target + " exists and is not a LeRobot dataset (no meta/info.json); --force only "
                    + "replaces an empty folder or an earlier export");
        }
    }

    /**
     * @return the key of a camera topic: its path segments without image-transport suffixes, joined by '_' (an
     *     imported LeRobot camera, {@code observation.images.X}, keeps its key X)
     */
    static String cameraKey(String topic) {
        if (topic.startsWith("observation.images.") && topic.length() > "observation.images.".length()) {
            topic = topic.substring("observation.images.".length()); // a LeRobot dataset's own camera, imported
        }
        List<String> parts = new ArrayList<>(Arrays.stream(topic.split("/")).filter(p -> !p.isEmpty()).toList());
        Set<String> suffixes = Set.of("compressed", "compresseddepth", "image", "image_raw", "image_rect", "image_color",
                "image_rect_color", "theora", "h264", "ffmpeg");
        while (parts.size() > 1 && suffixes.contains(parts.get(parts.size() - 1).toLowerCase(Locale.ROOT))) {
            parts.remove(parts.size() - 1);
        }
        String k = String.join("_", parts).replaceAll("[^A-Za-z0-9_.-]", "_");
        return k.isEmpty() ? "camera" : k;
    }

    /** @return {@code img} scaled to {@code w x h}, bilinear, pixel centres aligned */
    static RgbImage resize(RgbImage img, int w, int h) {
        byte[] src = img.pixels();
        byte[] dst = new byte[w * h * 3];
        int sw = img.width();
        int sh = img.height();
        for (int y = 0; y < h; y++) {
            double fy = Math.max(0, Math.min(sh - 1, (y + 0.5) * sh / h - 0.5));
            int y0 = (int) fy;
            int y1 = Math.min(sh - 1, y0 + 1);
            double ay = fy - y0;
            for (int x = 0; x < w; x++) {
                double fx = Math.max(0, Math.min(sw - 1, (x + 0.5) * sw / w - 0.5));
                int x0 = (int) fx;
                int x1 = Math.min(sw - 1, x0 + 1);
                double ax = fx - x0;
                for (int ch = 0; ch < 3; ch++) {
                    double top = (src[(y0 * sw + x0) * 3 + ch] & 0xFF) * (1 - ax) + (src[(y0 * sw + x1) * 3 + ch] & 0xFF) * ax;
                    double bot = (src[(y1 * sw + x0) * 3 + ch] & 0xFF) * (1 - ax) + (src[(y1 * sw + x1) * 3 + ch] & 0xFF) * ax;
                    dst[(y * w + x) * 3 + ch] = (byte) Math.round(top * (1 - ay) + bot * ay);
                }
            }
        }
        return new RgbImage(w, h, dst);
    }

    /**
     * Pads an image to even width and height by repeating its last column / row.
     *
     * @return the image itself when both are even
     */
    static RgbImage padToEven(RgbImage img) {
        int w = img.width() + (img.width() & 1);
        int h = img.height() + (img.height() & 1);
        if (w == img.width() && h == img.height()) {
            return img;
        }
        byte[] src = img.pixels();
        byte[] dst = new byte[w * h * 3];
        for (int y = 0; y < h; y++) {
            int sy = Math.min(y, img.height() - 1);
            System.arraycopy(src, sy * img.width() * 3, dst, y * w * 3, img.width() * 3);
            if (w != img.width()) {
                System.arraycopy(src, (sy * img.width() + img.width() - 1) * 3, dst, (y * w + w - 1) * 3, 3);
            }
        }
        return new RgbImage(w, h, dst);
    }

    /**
     * @return the dataset's fps: as requested, else the set's training rate (the rate achieved where the frames were
     *     sparser than the rate asked), else the first episode's median frame rate
     */
    static int fps(Trainset set, List<Sample> firstEpisode, int requested, String tag) {
        if (requested > 0) {
            return requested;
        }
        Object hz = set.lineage().get("sample_rate_hz");
        if (hz instanceof Number asked && asked.doubleValue() > 0
                && set.lineage().get("achieved_sample_rate_hz") instanceof Number got
                && Math.abs(got.doubleValue() - asked.doubleValue()) > 0.01 * asked.doubleValue()) {
            hz = got; // frames sparser than the rate asked: the samples come at the rate achieved
        }
        if (hz instanceof Number n && n.doubleValue() > 0) {
            long f = Math.round(n.doubleValue());
            if (f < 1 || Math.abs(n.doubleValue() - f) > 1e-6) {
                throw new ExportException("training set '" + tag + "' was sampled at " + n + " Hz, but LeRobot's fps is a whole"
                        + " number; pass --fps N to relabel the frames at N fps");
            }
            return (int) f;
        }
        long[] d = new long[Math.max(0, firstEpisode.size() - 1)];
        for (int i = 1; i < firstEpisode.size(); i++) {
            d[i - 1] = firstEpisode.get(i).timestampNs() - firstEpisode.get(i - 1).timestampNs();
        }
        Arrays.sort(d);
        if (d.length == 0 || d[d.length / 2] <= 0) {
            throw new ExportException("training set '" + tag + "': cannot derive a frame rate (sample_rate_hz is 0 and the first"
                    + " episode has " + firstEpisode.size() + " sample(s) with no positive interval); pass --fps");
        }
        double rate = 1e9 / d[d.length / 2];
        long f = Math.round(rate);
        if (f < 1 || Math.abs(rate - f) > 0.01 * rate) {
            throw new ExportException("training set '" + tag + "': its frames come at " + String.format(Locale.ROOT, "%.3f", rate)
                    + " Hz (median interval), not a whole number of frames per second as LeRobot's fps is; pass --fps N");
        }
        return (int) f;
    }

    private static long treeBytes(Path p) throws IOException {
        try (Stream<Path> s = Files.walk(p)) {
            return s.filter(Files::isRegularFile).mapToLong(x -> x.toFile().length()).sum();
        }
    }

    /** A gap: an interval over this many sample periods (a dropped frame, or more). */
    static final double GAP_PERIODS = 1.5;

    /**
     * @return the sample period of an episode, ns: the median interval of its samples' times (a set sampled at a rate
     *     its frames cannot give has the frames' own rate)
     */
    static double periodNs(long[] times) {
        long[] d = new long[Math.max(0, times.length - 1)];
        for (int i = 1; i < times.length; i++) {
            d[i - 1] = times[i] - times[i - 1];
        }
        Arrays.sort(d);
        return d.length == 0 || d[d.length / 2] <= 0 ? 1 : d[d.length / 2];
    }

    /**
     * Where each exported row comes from.
     *
     * @param source per row, the index of its sample in the episode
     * @param filled per row, whether it holds the previous row's sample because no sample fell in its slot
     * @param merged samples not exported because an earlier one took their slot (sampling faster than the period)
     */
    record Slots(int[] source, boolean[] filled, int merged) {
        int rows() {
            return source.length;
        }

        long filledCount() {
            long n = 0;
            for (boolean f : filled) {
                n += f ? 1 : 0;
            }
            return n;
        }
    }

    /**
     * Rows of an episode. Without {@code resample}, one row per sample, in order. With it, row k is the slot at
     * {@code k} sample periods after the first sample: the sample whose time rounds to it (the first such), or, where
     * none does (a dropped frame), the previous row's sample again, marked filled.
     *
     * @param timesNs the samples' times, ns, ascending
     * @throws ExportException when the slots would outnumber the samples more than 4 to 1 (a clock jump, not drops)
     */
    static Slots slots(long[] timesNs, double periodNs, boolean resample, String where) {
        int n = timesNs.length;
        if (!resample || n == 0) {
            int[] src = new int[n];
            for (int i = 0; i < n; i++) {
                src[i] = i;
            }
            return new Slots(src, new boolean[n], 0);
        }
        long last = Math.max(0, Math.round((timesNs[n - 1] - timesNs[0]) / periodNs));
        if (last + 1 > 4L * n + 16) {
            throw new ExportException(where + ": its " + n + " samples span " + (last + 1) + " slots of "
                    + String.format(Locale.ROOT, "%.1f", periodNs / 1e6) + " ms: a clock jump, not dropped frames;"
                    + " --resample would invent most of the episode");
        }
        int[] src = new int[(int) last + 1];
        Arrays.fill(src, -1);
        int merged = 0;
        for (int i = 0; i < n; i++) {
            int k = (int) Math.max(0, Math.min(last, Math.round((timesNs[i] - timesNs[0]) / periodNs)));
            if (src[k] < 0) {
                src[k] = i;
            } else {
                merged++;
            }
        }
        boolean[] filled = new boolean[src.length];
        for (int k = 1; k < src.length; k++) {
            if (src[k] < 0) {
                src[k] = src[k - 1];
                filled[k] = true;
            }
        }
        return new Slots(src, filled, merged);
    }

    /**
     * Refuses a set with an episode whose samples have a gap: numbering its frames ({@code frame_index / fps}, as
     * LeRobot's recorder does) would put every frame after the gap early.
     */
    private static void refuseGaps(Lake lake, String tag, Trainset set, List<TrainsetEpisode> episodes) {
        List<String> examples = new ArrayList<>();
        int gappy = 0;
        double worstShiftMs = 0;
        try (TrainsetLoader times = TrainsetLoader.open(lake, tag, LoaderOptions.builder()
                .images(LoaderOptions.Images.NONE).batchSize(READ_BATCH).threads(1).prefetch(1).build())) {
            for (TrainsetEpisode ep : episodes) {
                long[] idx = new long[(int) ep.sampleCount()];
                for (int i = 0; i < idx.length; i++) {
                    idx[i] = ep.firstSample() + i;
                }
                long[] t = times.get(idx).stream().mapToLong(Sample::timestampNs).toArray();
                double period = periodNs(t);
                int gaps = 0;
                long largest = 0;
                int at = -1;
                for (int i = 1; i < t.length; i++) {
                    long d = t[i] - t[i - 1];
                    if (d > GAP_PERIODS * period) {
                        gaps++;
                        if (d > largest) {
                            largest = d;
                            at = i;
                        }
                    }
                }
                if (gaps > 0) {
                    gappy++;
                    double shift = (t[t.length - 1] - t[0]) / 1e6 - (t.length - 1) * period / 1e6;
                    worstShiftMs = Math.max(worstShiftMs, shift);
                    if (examples.size() < 5) {
                        examples.add(String.format(Locale.ROOT, "%s (%d gap(s), largest %.1f ms before frame %d)",
                                ep.info().episodeId(), gaps, largest / 1e6, at));
                    }
                }
            }
        }
        if (gappy > 0) {
            throw new ExportException(String.format(Locale.ROOT, "training set '%s': %d episode(s) have dropped frames"
                    + " (intervals over %.1f sample periods): %s%s; numbering their frames would put every later frame"
                    + " early (by up to %.0f ms at an episode's end). Pass --resample to place each sample on the fps"
                    + " grid by its time, the dropped slots holding the previous frame and marked flywheel.filled = 1",
                    tag, gappy, GAP_PERIODS, String.join(", ", examples), gappy > examples.size() ? ", ..." : "",
                    worstShiftMs));
        }
    }

    /** Samples per episode probed for its state/action shape (the first ones may lack a value: alignment misses). */
    private static final int SHAPE_PROBE = 16;

    /**
     * A LeRobot dataset has one state and one action shape: the episodes whose shape (that of the first of their
     * first {@value #SHAPE_PROBE} samples with both a state and an action) is the most common, in set order (ties:
     * the shape met first). Episodes without such a sample have no shape and are left out too.
     */
    private static List<TrainsetEpisode> oneShape(Lake lake, List<TrainsetEpisode> episodes, String tag) {
        List<TrainsetEpisode> nonEmpty = episodes.stream().filter(ep -> ep.sampleCount() > 0).toList();
        List<Long> probe = new ArrayList<>();
        for (TrainsetEpisode ep : nonEmpty) {
            for (long i = 0; i < Math.min(SHAPE_PROBE, ep.sampleCount()); i++) {
                probe.add(ep.firstSample() + i);
            }
        }
        List<Sample> probed;
        // one take without images: only the vector lengths are needed
        try (TrainsetLoader shapes = TrainsetLoader.open(lake, tag, LoaderOptions.builder()
                .images(LoaderOptions.Images.NONE).threads(1).prefetch(1).build())) {
            probed = shapes.get(probe.stream().mapToLong(Long::longValue).toArray());
        }
        Map<String, List<TrainsetEpisode>> byShape = new LinkedHashMap<>();
        int at = 0;
        for (TrainsetEpisode ep : nonEmpty) {
            int n = (int) Math.min(SHAPE_PROBE, ep.sampleCount());
            String shape = null;
            for (int i = at; i < at + n && shape == null; i++) {
                Sample s = probed.get(i);
                if (s.state().length > 0 && s.action().length > 0) {
                    shape = s.state().length + "/" + s.action().length;
                }
            }
            at += n;
            if (shape != null) {
                byShape.computeIfAbsent(shape, k -> new ArrayList<>()).add(ep);
            }
        }
        List<TrainsetEpisode> best = List.of();
        for (List<TrainsetEpisode> l : byShape.values()) {
            if (l.size() > best.size()) {
                best = l;
            }
        }
        if (best.isEmpty()) {
            throw new ExportException("training set '" + tag + "' has no sample with both a state and an action in the"
                    + " first " + SHAPE_PROBE + " samples of any episode; LeRobot needs observation.state and action");
        }
        return best;
    }

    /**
     * The cameras exported and the episodes kept for them.
     *
     * @param topics the camera topics, in order of first appearance
     * @param kept the episodes exported, in set order
     * @param leftOut ids of the episodes left out because their cameras differ
     * @param sampleWith per camera topic, the index of a sample that has its image (its size)
     */
    record Cameras(List<String> topics, List<TrainsetEpisode> kept, List<String> leftOut,
                   Map<String, Long> sampleWith) {}

    /**
     * A LeRobot dataset has one set of cameras. Without {@code fill}: the most common set of camera topics among the
     * episodes (those of their first {@value #SHAPE_PROBE} samples; ties: the one met first), and the episodes with
     * another set are left out. With {@code fill}: every camera any episode has, and an episode without one of them
     * gets black frames for it.
     */
    private static Cameras cameras(Lake lake, String tag, List<TrainsetEpisode> episodes, boolean fill) {
        List<Long> probe = new ArrayList<>();
        for (TrainsetEpisode ep : episodes) {
            for (long i = 0; i < Math.min(SHAPE_PROBE, ep.sampleCount()); i++) {
                probe.add(ep.firstSample() + i);
            }
        }
        List<Sample> probed;
        try (TrainsetLoader images = TrainsetLoader.open(lake, tag, LoaderOptions.builder()
                .images(LoaderOptions.Images.BYTES).threads(1).prefetch(1).build())) {
            probed = images.get(probe.stream().mapToLong(Long::longValue).toArray());
        }
        List<Set<String>> perEpisode = new ArrayList<>();
        Set<String> all = new java.util.LinkedHashSet<>();
        Map<String, Long> sampleWith = new HashMap<>();
        int at = 0;
        for (TrainsetEpisode ep : episodes) {
            Set<String> topics = new java.util.LinkedHashSet<>();
            for (int i = at; i < at + Math.min(SHAPE_PROBE, ep.sampleCount()); i++) {
                Sample x = probed.get(i);
                x.images().forEach(c -> {
                    topics.add(c.topic());
                    sampleWith.putIfAbsent(c.topic(), x.sampleIndex());
                });
            }
            at += (int) Math.min(SHAPE_PROBE, ep.sampleCount());
            perEpisode.add(topics);
            all.addAll(topics);
        }
        if (fill) {
            return new Cameras(List.copyOf(all), episodes, List.of(), sampleWith);
        }
        Map<Set<String>, Integer> count = new LinkedHashMap<>();
        perEpisode.forEach(t -> count.merge(t, 1, Integer::sum));
        Set<String> best = count.entrySet().stream().max(Comparator.comparingInt(Map.Entry::getValue))
                .map(Map.Entry::getKey).orElse(Set.of());
        List<TrainsetEpisode> kept = new ArrayList<>();
        List<String> left = new ArrayList<>();
        for (int e = 0; e < episodes.size(); e++) {
            if (perEpisode.get(e).equals(best)) {
                kept.add(episodes.get(e));
            } else {
                left.add(episodes.get(e).info().episodeId() + " " + perEpisode.get(e));
            }
        }
        return new Cameras(List.copyOf(best), kept, left, sampleWith);
    }

    /** One export run: state of the files being written. */
    private static final class Writer {
        private final Path root;
        private final String tag;
        private final Trainset set;
        private final List<TrainsetEpisode> episodes;
        private final TrainsetLoader loader;
        private final LeRobotExportOptions o;
        private final Consumer<String> progress;

        private int fps;
        private int stateDim;
        private int actionDim;
        /** The {@code names} of observation.state and action in info.json: the episodes' value names. */
        private List<String> stateNames = List.of();
        private List<String> actionNames = List.of();
        private final List<String> topics = new ArrayList<>();
        /** Camera images repeated from the camera's previous frame because alignment left the frame without one. */
        private long filledImages;
        /** States and actions held from a neighbouring sample because alignment left the sample without one. */
        private long filledVectors;
        /** Rows holding the previous sample because a frame was dropped (--resample). */
        private long filledSlots;
        /** Samples not exported because an earlier one took their slot (--resample). */
        private long mergedSamples;
        private final List<String> keys = new ArrayList<>();
        private int[] width;
        private int[] height;
        private int[] srcWidth;
        private int[] srcHeight;
        private final Map<String, Integer> taskIndex = new LinkedHashMap<>();

        // data files
        private ParquetTable data;
        private int dataChunk;
        private int dataFile = -1;
        private long dataRowsInFile;
        private long rowsPerDataFile;
        private int dataFiles;
        // video files, per camera
        private Mp4VideoWriter[] video;
        private int[] videoChunk;
        private int[] videoFile;
        private Path[] videoPath;
        private int videoFiles;
        private String encoder = "";

        private final Map<String, FeatureStats> global = new LinkedHashMap<>();
        private final List<Object[]> episodeRows = new ArrayList<>();
        private List<Column> episodeColumns;

        private final Cameras cameras;
        /** Black frames written for a camera an episode has no image of at all (--missing-camera fill). */
        private long blackImages;

        Writer(Path root, String tag, Trainset set, List<TrainsetEpisode> episodes, Cameras cameras,
               TrainsetLoader loader, LeRobotExportOptions o, Consumer<String> progress) {
            this.root = root;
            this.cameras = cameras;
            this.tag = tag;
            this.set = set;
            this.episodes = episodes;
            this.loader = loader;
            this.o = o;
            this.progress = progress;
        }

        LeRobotExportResult run() throws IOException {
            long t0 = System.nanoTime();
            List<Sample> first = read(episodes.get(0));
            Sample s0 = first.stream().filter(x -> x.state().length > 0 && x.action().length > 0).findFirst()
                    .orElseThrow(() -> new ExportException("training set '" + tag + "' episode " + first.get(0).episodeId()
                            + " has no sample with both a state and an action; LeRobot needs observation.state and action"));
            fps = fps(set, first, o.fps(), tag);
            stateDim = s0.state().length;
            actionDim = s0.action().length;
            valueNames();
            // the cameras chosen for the set (a frame may lack one where alignment found no image of it: its video
            // repeats the camera's previous image there)
            Set<String> seen = new HashSet<>();
            for (String topic : cameras.topics()) {
                topics.add(topic);
                String k = "observation.images." + cameraKey(topic);
                if (!seen.add(k)) {
                    k = "observation.images." + topic.replaceAll("^/+", "").replaceAll("[^A-Za-z0-9_.-]", "_");
                    seen.add(k);
                }
                keys.add(k);
            }
            int cams = topics.size();
            width = new int[cams];
            height = new int[cams];
            srcWidth = new int[cams];
            srcHeight = new int[cams];
            video = new Mp4VideoWriter[cams];
            videoChunk = new int[cams];
            videoFile = new int[cams];
            Arrays.fill(videoFile, -1);
            videoPath = new Path[cams];
            long bytesPerRow = 4 + 4L * 8 + 4L * (stateDim + actionDim) + 16;
            rowsPerDataFile = Math.max(1, (long) o.dataFileSizeMb() * (1 << 20) / bytesPerRow);
            global.put("observation.state", FeatureStats.vector(stateDim));
            global.put("action", FeatureStats.vector(actionDim));
            for (String k : keys) {
                global.put(k, FeatureStats.image());
            }
            global.put("timestamp", FeatureStats.vector(1));
            for (String k : integerColumns()) {
                global.put(k, FeatureStats.integer());
            }
            episodeColumns = episodeColumns();
            long index = 0;
            try {
                for (int e = 0; e < episodes.size(); e++) {
                    List<Sample> samples = e == 0 ? first : read(episodes.get(e));
                    index += writeEpisode(e, episodes.get(e), samples, index);
                    double secs = (System.nanoTime() - t0) / 1e9;
                    progress.accept(String.format(Locale.ROOT, "export: %d/%d episodes, %d frames, %.0f frames/s, ETA %.0fs",
                            e + 1, episodes.size(), index, index / secs,
                            (set.sampleCount() - index) * secs / Math.max(1, index)));
                }
            } finally {
                closeData();
                for (int c = 0; c < cams; c++) {
                    closeVideo(c);
                }
            }
            writeEpisodes();
            writeTasks();
            writeStats();
            writeInfo(index);
            List<LeRobotExportResult.Camera> cameras = new ArrayList<>();
            for (int c = 0; c < cams; c++) {
                cameras.add(new LeRobotExportResult.Camera(keys.get(c), topics.get(c), width[c], height[c],
                        width[c] != srcWidth[c] || height[c] != srcHeight[c]));
            }
            return new LeRobotExportResult(root, tag, fps, episodes.size(), index, taskIndex.size(), cameras, encoder,
                    dataFiles, videoFiles, 0, 0, filledImages, filledVectors, List.of(), filledSlots, mergedSamples,
                    blackImages);
        }

        private List<Sample> read(TrainsetEpisode ep) {
            List<Sample> out = new ArrayList<>();
            for (long from = ep.firstSample(); from < ep.firstSample() + ep.sampleCount(); from += READ_BATCH) {
                int n = (int) Math.min(READ_BATCH, ep.firstSample() + ep.sampleCount() - from);
                long[] idx = new long[n];
                for (int i = 0; i < n; i++) {
                    idx[i] = from + i;
                }
                out.addAll(loader.get(idx));
            }
            return out;
        }

        /** @return the rows written */
        private int writeEpisode(int e, TrainsetEpisode ep, List<Sample> samples, long index) throws IOException {
            String task = ep.info().task() == null || ep.info().task().isBlank() ? "unspecified" : ep.info().task();
            long taskIdx = taskIndex.computeIfAbsent(task, t -> taskIndex.size());
            long[] times = samples.stream().mapToLong(Sample::timestampNs).toArray();
            Slots plan = slots(times, periodNs(times), o.resample(), "training set '" + tag + "' episode "
                    + ep.info().episodeId());
            filledSlots += plan.filledCount();
            mergedSamples += plan.merged();
            int n = plan.rows();
            // data file: a new one when this episode would pass the size limit (episodes never span files)
            if (data == null || (dataRowsInFile > 0 && dataRowsInFile + n > rowsPerDataFile)) {
                closeData();
                if (dataFile >= 0) {
                    int[] next = next(dataChunk, dataFile);
                    dataChunk = next[0];
                    dataFile = next[1];
                } else {
                    dataFile = 0;
                }
                data = ParquetTable.create(root.resolve(path(DATA_PATH, null, dataChunk, dataFile)), dataColumns(), Map.of());
                dataFiles++;
                dataRowsInFile = 0;
            }
            int cams = topics.size();
            double[] from = new double[cams];
            RgbImage[] last = new RgbImage[cams];
            boolean[] absent = new boolean[cams]; // the episode has no image of the camera at all
            boolean[] statsRows = FeatureStats.imageSampleRows(n);
            for (int c = 0; c < cams; c++) {
                absent[c] = firstImage(samples, topics.get(c)) == null;
                openVideoIfNeeded(c, samples, e);
                from[c] = video[c].nextFrameTime().seconds();
            }
            Map<String, FeatureStats> st = new LinkedHashMap<>();
            st.put("observation.state", FeatureStats.vector(stateDim));
            st.put("action", FeatureStats.vector(actionDim));
            for (String k : keys) {
                st.put(k, FeatureStats.image());
            }
            st.put("timestamp", FeatureStats.vector(1));
            for (String k : integerColumns()) {
                st.put(k, FeatureStats.integer());
            }
            float[] state = null;
            float[] action = null;
            for (int row = 0; row < n; row++) {
                int i = plan.source()[row];
                Sample s = samples.get(i);
                String where = "training set '" + tag + "' episode " + s.episodeId() + " frame " + s.frameIndex()
                        + " (sample " + s.sampleIndex() + ")";
                state = vector(s.state(), state, samples, i, true, stateDim, where);
                action = vector(s.action(), action, samples, i, false, actionDim, where);
                float ts = (float) ((double) row / fps);
                long g = index + row;
                if (o.resample()) {
                    long filled = plan.filled()[row] ? 1 : 0;
                    data.write(state, action, ts, (long) row, (long) e, g, taskIdx, filled);
                    addInt(st, FILLED, filled);
                } else {
                    data.write(state, action, ts, (long) row, (long) e, g, taskIdx);
                }
                add(st, "observation.state", state);
                add(st, "action", action);
                add(st, "timestamp", new float[] {ts});
                addInt(st, "frame_index", row);
                addInt(st, "episode_index", e);
                addInt(st, "index", g);
                addInt(st, "task_index", taskIdx);
                for (int c = 0; c < cams; c++) {
                    RgbImage img = imageOf(s, topics.get(c));
                    if (img == null) {
                        // a frame left without this camera by alignment (dropped frame): repeat the camera's
                        // last image so the video keeps one frame per sample and timestamps stay aligned
                        img = absent[c] ? null : last[c] != null ? last[c] : firstImage(samples, topics.get(c));
                        if (absent[c] && o.fillMissingCameras()) {
                            img = new RgbImage(srcWidth[c], srcHeight[c], new byte[srcWidth[c] * srcHeight[c] * 3]);
                            blackImages++;
                        } else if (img == null) {
                            throw new ExportException(where + " has no image for camera " + topics.get(c)
                                    + " in the whole episode");
                        } else {
                            filledImages++;
                        }
                    }
                    img = scaled(img);
                    last[c] = img;
                    if (img.width() != srcWidth[c] || img.height() != srcHeight[c]) {
                        throw new ExportException(where + ": " + topics.get(c) + " image is " + img.width() + "x" + img.height()
                                + ", expected " + srcWidth[c] + "x" + srcHeight[c] + " like the camera's first image (one"
                                + " video per camera needs one size)");
                    }
                    RgbImage frame = padToEven(img);
                    video[c].write(frame);
                    if (statsRows[row]) { // the frames LeRobot's stats sample, at its stats size
                        RgbImage small = FeatureStats.downsample(img);
                        st.get(keys.get(c)).add(small);
                        global.get(keys.get(c)).add(small);
                    }
                }
            }
            dataRowsInFile += n;
            List<Object> row = new ArrayList<>();
            row.add((long) e);
            row.add(new String[] {task});
            row.add((long) n);
            row.add((long) dataChunk);
            row.add((long) dataFile);
            row.add(index);
            row.add(index + n);
            for (int c = 0; c < cams; c++) {
                row.add((long) videoChunk[c]);
                row.add((long) videoFile[c]);
                row.add(from[c]);
                row.add(from[c] + (double) n / fps);
            }
            for (Map.Entry<String, FeatureStats> f : st.entrySet()) {
                for (Object v : f.getValue().result().values()) {
                    row.add(v);
                }
            }
            row.add(0L);
            row.add(0L);
            episodeRows.add(row.toArray());
            return n;
        }

        private void add(Map<String, FeatureStats> st, String key, float[] v) {
            double[] d = new double[v.length];
            for (int i = 0; i < v.length; i++) {
                d[i] = v[i];
            }
            st.get(key).add(d);
            global.get(key).add(d);
        }

        private void addInt(Map<String, FeatureStats> st, String key, long v) {
            st.get(key).add(v);
            global.get(key).add(v);
        }

        /**
         * A sample's state or action as float32. Where alignment left the sample without one (length 0), the
         * previous sample's value is held (or, at the episode's start, the first later one): LeRobot has a value
         * on every frame; counted in {@code filledVectors}.
         */
        private float[] vector(double[] v, float[] previous, List<Sample> samples, int i, boolean state, int dims,
                               String where) {
            String what = state ? "state" : "action";
            if (v.length == 0) {
                filledVectors++;
                if (previous != null) {
                    return previous;
                }
                for (int j = i + 1; j < samples.size(); j++) {
                    double[] later = state ? samples.get(j).state() : samples.get(j).action();
                    if (later.length > 0) {
                        return vector(later, null, samples, j, state, dims, where);
                    }
                }
                throw new ExportException(where + ": no sample of the episode has " + what + " values");
            }
            if (v.length != dims) {
                throw new ExportException(where + " has " + v.length + " " + what + " values; expected " + dims
                        + " like the set's first sample");
            }
            float[] f = new float[dims];
            for (int k = 0; k < dims; k++) {
                f[k] = (float) v[k];
            }
            return f;
        }

        private RgbImage imageOf(Sample s, String topic) {
            for (CameraImage ci : s.images()) {
                if (ci.topic().equals(topic)) {
                    return ci.decoded();
                }
            }
            return null;
        }

        /** @return the image at --resolution WIDTHxHEIGHT (bilinear), or as it is */
        private RgbImage scaled(RgbImage img) {
            String r = o.resolution();
            if (r == null || r.equals("hot")) {
                return img;
            }
            int w = Integer.parseInt(r.substring(0, r.indexOf('x')));
            int h = Integer.parseInt(r.substring(r.indexOf('x') + 1));
            return img.width() == w && img.height() == h ? img : resize(img, w, h);
        }

        private RgbImage firstImage(List<Sample> samples, String topic) {
            for (Sample s : samples) {
                RgbImage img = imageOf(s, topic);
                if (img != null) {
                    return img;
                }
            }
            return null;
        }

        private void openVideoIfNeeded(int c, List<Sample> samples, int episode) throws IOException {
            if (video[c] == null) {
                RgbImage img = firstImage(samples, topics.get(c));
                if (img == null && cameras.sampleWith().containsKey(topics.get(c))) { // another episode's image
                    img = imageOf(loader.get(new long[] {cameras.sampleWith().get(topics.get(c))}).get(0),
                            topics.get(c));
                }
                if (img == null) {
                    throw new ExportException("training set '" + tag + "' episode " + samples.get(0).episodeId()
                            + " has no image for camera " + topics.get(c) + " in any frame");
                }
                img = scaled(img);
                if (srcWidth[c] == 0) {
                    srcWidth[c] = img.width();
                    srcHeight[c] = img.height();
                    width[c] = img.width() + (img.width() & 1);
                    height[c] = img.height() + (img.height() & 1);
                }
            } else if (Files.size(videoPath[c]) < (long) o.videoFileSizeMb() * (1 << 20)) {
                return;
            } else {
                closeVideo(c);
            }
            if (videoFile[c] >= 0) {
                int[] next = next(videoChunk[c], videoFile[c]);
                videoChunk[c] = next[0];
                videoFile[c] = next[1];
            } else {
                videoFile[c] = 0;
            }
            videoPath[c] = root.resolve(path(VIDEO_PATH, keys.get(c), videoChunk[c], videoFile[c]));
            Files.createDirectories(videoPath[c].getParent());
            EncoderOptions eo = EncoderOptions.builder().fps(fps).keyframeInterval(keyframeInterval()).bitRate(o.bitRate())
                    .build();
            video[c] = Mp4VideoWriter.open(videoPath[c], width[c], height[c], eo);
            encoder = video[c].encoderName();
            videoFiles++;
        }

        private void closeVideo(int c) throws IOException {
            if (video[c] != null) {
                Mp4VideoWriter v = video[c];
                video[c] = null;
                v.close();
            }
        }

        private void closeData() throws IOException {
            if (data != null) {
                ParquetTable d = data;
                data = null;
                d.close();
            }
        }

        /** LeRobot's update_chunk_file_indices: the next file, or the first file of the next chunk. */
        private int[] next(int chunk, int file) {
            return file == o.chunksSize() - 1 ? new int[] {chunk + 1, 0} : new int[] {chunk, file + 1};
        }

        private List<Column> dataColumns() {
            List<Column> cols = new ArrayList<>(List.of(new Column("observation.state", Kind.LIST_FLOAT32, stateDim),
                    new Column("action", Kind.LIST_FLOAT32, actionDim), Column.of("timestamp", Kind.FLOAT32)));
            integerColumns().forEach(k -> cols.add(Column.of(k, Kind.INT64)));
            return cols;
        }

        /** The int64 scalar columns, in data-file order: LeRobot's four, and the filled mark with --resample. */
        private List<String> integerColumns() {
            return o.resample() ? List.of("frame_index", "episode_index", "index", "task_index", FILLED)
                    : List.of("frame_index", "episode_index", "index", "task_index");
        }

        /** @return frames between keyframes: as asked, else half a second's frames */
        int keyframeInterval() {
            return o.keyframeInterval() > 0 ? o.keyframeInterval() : Math.max(1, fps / 2);
        }

        private List<Column> episodeColumns() {
            List<Column> cols = new ArrayList<>(List.of(Column.of("episode_index", Kind.INT64),
                    Column.of("tasks", Kind.LIST_STRING), Column.of("length", Kind.INT64),
                    Column.of("data/chunk_index", Kind.INT64), Column.of("data/file_index", Kind.INT64),
                    Column.of("dataset_from_index", Kind.INT64), Column.of("dataset_to_index", Kind.INT64)));
            for (String k : keys) {
                cols.add(Column.of("videos/" + k + "/chunk_index", Kind.INT64));
                cols.add(Column.of("videos/" + k + "/file_index", Kind.INT64));
                cols.add(Column.of("videos/" + k + "/from_timestamp", Kind.FLOAT64));
                cols.add(Column.of("videos/" + k + "/to_timestamp", Kind.FLOAT64));
            }
            for (String f : global.keySet()) {
                boolean image = f.startsWith("observation.images.");
                boolean integer = integerColumns().contains(f);
                for (String stat : statNames()) {
                    Kind kind = stat.equals("count") ? Kind.LIST_INT64 : image ? Kind.LIST3_FLOAT64
                            : integer && (stat.equals("min") || stat.equals("max")) ? Kind.LIST_INT64 : Kind.LIST_FLOAT64;
                    cols.add(Column.of("stats/" + f + "/" + stat, kind));
                }
            }
            cols.add(Column.of("meta/episodes/chunk_index", Kind.INT64));
            cols.add(Column.of("meta/episodes/file_index", Kind.INT64));
            return cols;
        }

        private static List<String> statNames() {
            List<String> s = new ArrayList<>(List.of("min", "max", "mean", "std", "count"));
            s.addAll(FeatureStats.QUANTILE_KEYS);
            return s;
        }

        private void writeEpisodes() throws IOException {
            try (ParquetTable t = ParquetTable.create(root.resolve(EPISODES_PATH), episodeColumns, Map.of())) {
                for (Object[] r : episodeRows) {
                    t.write(r);
                }
            }
        }

        /**
         * tasks.parquet as LeRobot writes it ({@code pd.DataFrame({"task_index": ...}, index=tasks).to_parquet()}):
         * column task_index, then the unnamed index of task strings, stored as {@code __index_level_0__} and named in
         * the footer's pandas metadata, so that {@code pd.read_parquet} gives a frame indexed by task text
         * ({@code tasks.loc[text].task_index}, {@code tasks.iloc[i].name}).
         */
        private void writeTasks() throws IOException {
            Map<String, Object> pandas = new LinkedHashMap<>();
            pandas.put("index_columns", List.of(PANDAS_INDEX));
            pandas.put("column_indexes", List.of(Map.of("name", "None", "field_name", "None", "pandas_type", "unicode",
                    "numpy_type", "object", "metadata", Map.of("encoding", "UTF-8"))));
            pandas.put("columns", List.of(
                    column("task_index", "task_index", "int64", "int64"),
                    column("None", PANDAS_INDEX, "unicode", "object")));
            pandas.put("creator", Map.of("library", "pyarrow", "version", "18.1.0"));
            pandas.put("pandas_version", "2.2.3");
            String json = JSON.writeValueAsString(pandas).replace("\"None\"", "null");
            try (ParquetTable t = ParquetTable.create(root.resolve("meta/tasks.parquet"),
                    List.of(Column.of("task_index", Kind.INT64), Column.of(PANDAS_INDEX, Kind.STRING)),
                    Map.of("pandas", json))) {
                for (Map.Entry<String, Integer> e : taskIndex.entrySet()) {
                    t.write((long) e.getValue(), e.getKey());
                }
            }
        }

        private static Map<String, Object> column(String name, String field, String pandasType, String numpyType) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("field_name", field);
            m.put("pandas_type", pandasType);
            m.put("numpy_type", numpyType);
            m.put("metadata", null);
            return m;
        }

        private void writeStats() throws IOException {
            Map<String, Object> stats = new LinkedHashMap<>();
            for (Map.Entry<String, FeatureStats> e : global.entrySet()) {
                stats.put(e.getKey(), e.getValue().result());
            }
            JSON.writeValue(root.resolve("meta/stats.json").toFile(), stats);
        }

        private void writeInfo(long frames) throws IOException {
            Map<String, Object> features = new LinkedHashMap<>();
            features.put("observation.state", vectorFeature("float32", stateDim, stateNames));
            features.put("action", vectorFeature("float32", actionDim, actionNames));
            for (int c = 0; c < keys.size(); c++) {
                Map<String, Object> vinfo = new LinkedHashMap<>();
                vinfo.put("video.height", height[c]);
                vinfo.put("video.width", width[c]);
                vinfo.put("video.codec", encoder.equals("libx264") || encoder.equals("libopenh264") ? "h264" : encoder);
                vinfo.put("video.pix_fmt", "yuv420p");
                vinfo.put("video.is_depth_map", false);
                vinfo.put("video.fps", fps);
                vinfo.put("video.channels", 3);
                vinfo.put("has_audio", false);
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("dtype", "video");
                f.put("shape", List.of(height[c], width[c], 3));
                f.put("names", List.of("height", "width", "channels"));
                f.put("info", vinfo);
                features.put(keys.get(c), f);
            }
            features.put("timestamp", scalar("float32"));
            for (String k : integerColumns()) {
                features.put(k, scalar("int64"));
            }
            String robotType = o.robotType();
            if (robotType == null) {
                Set<String> ids = new HashSet<>();
                for (TrainsetEpisode ep : episodes) {
                    ids.add(ep.info().robotId() == null ? "" : ep.info().robotId());
                }
                ids.remove("");
                // robot_type is a string for LeRobot: a mixed fleet names its robots
                robotType = ids.isEmpty() ? "unknown" : ids.size() == 1 ? ids.iterator().next()
                        : "mixed: " + String.join(", ", new java.util.TreeSet<>(ids));
            }
            Map<String, Object> info = new LinkedHashMap<>();
            info.put("codebase_version", CODEBASE_VERSION);
            info.put("robot_type", robotType);
            info.put("total_episodes", episodes.size());
            info.put("total_frames", frames);
            info.put("total_tasks", taskIndex.size());
            info.put("chunks_size", o.chunksSize());
            info.put("data_files_size_in_mb", o.dataFileSizeMb());
            info.put("video_files_size_in_mb", o.videoFileSizeMb());
            info.put("fps", fps);
            info.put("splits", Map.of("train", "0:" + episodes.size()));
            info.put("data_path", DATA_PATH);
            info.put("video_path", keys.isEmpty() ? null : VIDEO_PATH);
            info.put("features", features);
            JSON.writeValue(root.resolve("meta/info.json").toFile(), info);
        }

        /**
         * The feature names: the value names of the set's first episode that has them (one per value), else
         * {@code state_0..}, {@code action_0..}; episodes whose names differ are named in a note.
         */
        private void valueNames() {
            io.flywheel.curate.trainset.ValueNames chosen = null;
            String from = null;
            List<String> differ = new ArrayList<>();
            for (TrainsetEpisode ep : episodes) {
                io.flywheel.curate.trainset.ValueNames n = loader.valueNames(ep.info().episodeId());
                if (n.state().size() != stateDim && n.action().size() != actionDim) {
                    continue;
                }
                if (chosen == null) {
                    chosen = n;
                    from = ep.info().episodeId();
                } else if (!chosen.equals(n)) {
                    differ.add(ep.info().episodeId());
                }
            }
            if (chosen == null) {
                chosen = io.flywheel.curate.trainset.ValueNames.NONE;
            }
            stateNames = io.flywheel.curate.trainset.ValueNames.orPositional(chosen.state(), stateDim, "state");
            actionNames = io.flywheel.curate.trainset.ValueNames.orPositional(chosen.action(), actionDim, "action");
            if (!differ.isEmpty()) {
                progress.accept("export: note: " + differ.size() + " episode(s) name their state/action values other"
                        + " than " + from + ", whose names info.json gives: " + String.join(", ", differ));
            }
        }

        private static Map<String, Object> vectorFeature(String dtype, int dims, List<String> names) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("dtype", dtype);
            f.put("shape", List.of(dims));
            f.put("names", names);
            return f;
        }

        private static Map<String, Object> scalar(String dtype) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("dtype", dtype);
            f.put("shape", List.of(1));
            f.put("names", null);
            return f;
        }
    }

    /** @return a LeRobot path template filled in */
    static String path(String template, String videoKey, int chunk, int file) {
        String p = template.replace("{chunk_index:03d}", String.format(Locale.ROOT, "%03d", chunk))
                .replace("{file_index:03d}", String.format(Locale.ROOT, "%03d", file));
        return videoKey == null ? p : p.replace("{video_key}", videoKey);
    }
}
