package io.flywheel.bench;

import static org.bytedeco.ffmpeg.global.avcodec.av_packet_alloc;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_free;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_rescale_ts;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_unref;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_parameters_copy;
import static org.bytedeco.ffmpeg.global.avformat.AVIO_FLAG_WRITE;
import static org.bytedeco.ffmpeg.global.avformat.av_interleaved_write_frame;
import static org.bytedeco.ffmpeg.global.avformat.av_read_frame;
import static org.bytedeco.ffmpeg.global.avformat.av_write_trailer;
import static org.bytedeco.ffmpeg.global.avformat.avformat_alloc_output_context2;
import static org.bytedeco.ffmpeg.global.avformat.avformat_close_input;
import static org.bytedeco.ffmpeg.global.avformat.avformat_find_stream_info;
import static org.bytedeco.ffmpeg.global.avformat.avformat_free_context;
import static org.bytedeco.ffmpeg.global.avformat.avformat_new_stream;
import static org.bytedeco.ffmpeg.global.avformat.avformat_open_input;
import static org.bytedeco.ffmpeg.global.avformat.avformat_write_header;
import static org.bytedeco.ffmpeg.global.avformat.avio_closep;
import static org.bytedeco.ffmpeg.global.avformat.avio_open;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.apache.parquet.example.data.Group;
import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avformat.AVFormatContext;
import org.bytedeco.ffmpeg.avformat.AVIOContext;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVDictionary;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.Stride;
import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LocalFiles;
import io.flywheel.quality.RuleSet;
import io.flywheel.serve.export.LeRobotExportOptions;
import io.flywheel.serve.export.LeRobotExportResult;
import io.flywheel.serve.export.LeRobotExporter;

/**
 * LeRobot export rate against a plain write of the same data, one JVM, single-threaded. Writes the LeRobotDataset
 * v3.0 folder of {@link LeRobotImportBench} (E episodes of F frames at 30 fps, 14-dim state and action, one 64x48
 * H.264 camera), ingests it into two lakes, enriches the first with 64-px hot copies (64x48, the source size) and the second
 * with 32-px ones (32x24), and builds in each a training set of every frame (ratio 1); all of that is untimed. The
 * frames of an imported LeRobot video are H.264 access units that do not decode alone, so the loader, and with it the
 * export, reads the enriched JPEG hot copies in either lake. Then takes turns ({@code warmup} untimed rounds, then {@code runs} timed; the
 * median is reported):
 * <ul>
 *   <li>{@code plain}: the data rows, already Java values, written with parquet-java (Snappy, the data file only),
 *       then the source MP4's H.264 packets copied into a new MP4 with FFmpeg (read, rescale, interleaved write:
 *       a remux, no decode, no encode): the least any export of this data must do;</li>
 *   <li>{@code export}: {@link LeRobotExporter#export} of the first lake's set, default resolution (64x48): the loader reads the
 *       samples from the lake and decodes the JPEG frames, the exporter encodes them to H.264, writes data, episodes
 *       and tasks Parquet, per-episode and global stats, info.json;</li>
 *   <li>{@code export-hot}: the second lake's set with {@code resolution = "hot"}: its 32x24 JPEG hot copies decoded and
 *       encoded.</li>
 * </ul>
 * Prints one JSON line per mode (frames/s), then one line with a rough profile of the export runs: the share of
 * stack samples (every 5 ms of the main thread) in encode, JPEG decode, Parquet write, stats, the lake read, the rest of the loader and the
 * rest of the exporter.
 *
 * <p>usage: {@code LeRobotExportBench [EPISODES] [FRAMES] [RUNS]} (defaults 20, 500, 5)
 */
public final class LeRobotExportBench {
    private static final int WARMUP = 2;

    private LeRobotExportBench() {}

    public static void main(String[] args) throws Exception {
        int episodes = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int frames = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        long total = (long) episodes * frames;
        Path root = Files.createTempDirectory("lerobot-export-bench");
        try {
            Path src = root.resolve("src");
            LeRobotImportBench.write(src, episodes, frames);
            Path mp4 = src.resolve("videos/observation.images.top/chunk-000/file-000.mp4");
            List<Group> rows = LeRobotImportBench.dataRows(episodes, frames);
            Path rawDir = root.resolve("lake-raw");
            Path hotDir = root.resolve("lake-hot");
            for (Path dir : List.of(rawDir, hotDir)) {
                try (Lake lake = Lake.init(dir)) {
                    IngestJob.run(lake, List.of(src), IngestOptions.defaults(), IngestJob.AlignConfig.defaults(),
                            RuleSet.defaults(), line -> { });
                    // H.264 access units do not decode alone: the loader (and so the export) takes the hot copies
                    EnrichJob.run(lake, null, EnrichOptions.builder().stride(Stride.every(1)).threads(1)
                            .image(FrameAnalyzer.Options.defaults().withHot(dir.equals(hotDir) ? 32 : 64, 90)).build(),
                            p -> { });
                    TrainsetBuilder.build(lake, TrainsetSpec.builder("all").baseRatio(1.0).seed(1).sampleRateHz(0)
                            .build(), TrainsetBuilder.Progress.NONE);
                }
            }
            Map<String, List<Double>> times = new LinkedHashMap<>();
            for (String m : List.of("plain", "export", "export-hot")) {
                times.put(m, new ArrayList<>());
            }
            Sampler sampler = new Sampler(Thread.currentThread());
            try (Lake raw = Lake.open(rawDir.toString()); Lake hot = Lake.open(hotDir.toString())) {
                for (int r = 0; r < WARMUP + runs; r++) {
                    Path out = root.resolve("out");
                    long t0 = System.nanoTime();
                    Files.createDirectories(out);
                    LeRobotImportBench.write(out.resolve("file-000.parquet"), LeRobotImportBench.DATA_SCHEMA, rows);
                    long packets = remux(mp4, out.resolve("file-000.mp4"));
                    if (packets != total) throw new IllegalStateException("remux copied " + packets + " of " + total);
                    long t1 = System.nanoTime();
                    int copied = io.flywheel.ingest.Mp4SampleTable.read(out.resolve("file-000.mp4")).samples().size();
                    if (copied != total) throw new IllegalStateException("the remuxed MP4 holds " + copied + " samples");
                    LocalFiles.deleteTree(out);
                    double[] ex = new double[2];
                    String[] res = {null, "hot"};
                    for (int k = 0; k < 2; k++) {
                        Path o = root.resolve("export-" + k);
                        if (r >= WARMUP) sampler.on = true;
                        long s0 = System.nanoTime();
                        LeRobotExportResult x = LeRobotExporter.export(k == 0 ? raw : hot, "all", o,
                                LeRobotExportOptions.builder().resolution(res[k]).build(), line -> { });
                        ex[k] = (System.nanoTime() - s0) / 1e9;
                        sampler.on = false;
                        if (x.frames() != total) throw new IllegalStateException("export wrote " + x.frames() + " frames");
                        if (r == WARMUP) {
                            System.err.println("export " + (res[k] == null ? "own" : res[k]) + ": " + x.cameras());
                        }
                        LocalFiles.deleteTree(o);
                    }
                    if (r >= WARMUP) {
                        times.get("plain").add((t1 - t0) / 1e9);
                        times.get("export").add(ex[0]);
                        times.get("export-hot").add(ex[1]);
                    }
                }
            }
            sampler.stop();
            for (var e : times.entrySet()) {
                double[] v = e.getValue().stream().mapToDouble(Double::doubleValue).sorted().toArray();
                double med = v[v.length / 2];
                System.out.printf(Locale.ROOT, "{\"mode\":\"%s\",\"episodes\":%d,\"frames\":%d,"
                        + "\"median_s\":%.4f,\"frames_per_s\":%.0f,\"runs_s\":%s}%n", e.getKey(), episodes, total,
                        med, total / med, Arrays.toString(v));
            }
            System.out.println(sampler.report());
        } finally {
            LocalFiles.deleteTree(root);
        }
    }

    /** Copies every video packet of {@code in} into a new MP4 {@code out} (stream copy); returns the packet count. */
    static long remux(Path in, Path out) throws IOException {
        AVFormatContext ic = new AVFormatContext(null);
        if (avformat_open_input(ic, in.toString(), null, null) < 0) throw new IOException(in + ": cannot open");
        AVFormatContext oc = new AVFormatContext(null);
        AVPacket p = av_packet_alloc();
        long n = 0;
        try {
            if (avformat_find_stream_info(ic, (AVDictionary) null) < 0) throw new IOException(in + ": no stream info");
            AVStream is = ic.streams(0);
            if (avformat_alloc_output_context2(oc, null, "mp4", out.toString()) < 0) {
                throw new IOException(out + ": cannot create an MP4 muxer");
            }
            AVStream os = avformat_new_stream(oc, null);
            if (avcodec_parameters_copy(os.codecpar(), is.codecpar()) < 0) throw new IOException("codecpar copy");
            os.codecpar().codec_tag(0);
            os.time_base(is.time_base());
            AVIOContext pb = new AVIOContext(null);
            if (avio_open(pb, out.toString(), AVIO_FLAG_WRITE) < 0) throw new IOException(out + ": cannot open");
            oc.pb(pb);
            if (avformat_write_header(oc, (AVDictionary) null) < 0) throw new IOException(out + ": header");
            while (av_read_frame(ic, p) >= 0) {
                if (p.stream_index() == 0) {
                    av_packet_rescale_ts(p, is.time_base(), os.time_base());
                    p.stream_index(0);
                    p.pos(-1);
                    if (av_interleaved_write_frame(oc, p) < 0) throw new IOException(out + ": packet " + n);
                    n++;
                }
                av_packet_unref(p);
            }
            if (av_write_trailer(oc) < 0) throw new IOException(out + ": trailer");
            return n;
        } finally {
            av_packet_free(p);
            if (!oc.isNull()) {
                if (oc.pb() != null && !oc.pb().isNull()) avio_closep(oc.pb());
                avformat_free_context(oc);
            }
            avformat_close_input(ic);
        }
    }

    /** Samples the main thread's stack every 5 ms while {@code on}, bucketed by the first matching frame. */
    static final class Sampler {
        private static final String[][] BUCKETS = {
            {"stats", "io.flywheel.serve.export.FeatureStats"},
            {"encode", "io.flywheel.enrich.video.Encoder", "io.flywheel.enrich.video.Mp4VideoWriter"},
            {"jpeg decode", "io.flywheel.serve.loader.RgbDecoder", "org.bytedeco.opencv", "javax.imageio"},
            {"parquet write", "io.flywheel.serve.export.ParquetTable", "org.apache.parquet"},
            {"lake read", "io.flywheel.lake", "org.apache.arrow", "com.lancedb", "org.lance"},
            {"loader other", "io.flywheel.serve.loader"},
        };
        volatile boolean on;
        private volatile boolean stopped;
        private final Map<String, Long> counts = new TreeMap<>();
        private final Thread daemon;

        Sampler(Thread target) {
            daemon = new Thread(() -> {
                while (!stopped) {
                    if (on) {
                        StackTraceElement[] st = target.getStackTrace();
                        String b = "other";
                        outer:
                        for (StackTraceElement f : st) {
                            for (String[] bucket : BUCKETS) {
                                for (int i = 1; i < bucket.length; i++) {
                                    if (f.getClassName().startsWith(bucket[i])) {
                                        b = bucket[0];
                                        break outer;
                                    }
                                }
                            }
                        }
                        synchronized (counts) {
                            counts.merge(b, 1L, Long::sum);
                        }
                    }
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "export-sampler");
            daemon.setDaemon(true);
            daemon.start();
        }

        void stop() throws InterruptedException {
            stopped = true;
            daemon.join();
        }

        String report() {
            synchronized (counts) {
                long sum = counts.values().stream().mapToLong(Long::longValue).sum();
                StringBuilder sb = new StringBuilder("{\"profile\":\"export runs, share of main-thread samples\","
                        + "\"samples\":" + sum);
                for (var e : counts.entrySet()) {
                    sb.append(String.format(Locale.ROOT, ",\"%s\":%.3f", e.getKey(), e.getValue() / (double) sum));
                }
                return sb.append('}').toString();
            }
        }
    }
}
