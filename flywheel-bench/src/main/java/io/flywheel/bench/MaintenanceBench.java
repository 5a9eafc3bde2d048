package io.flywheel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;


import io.flywheel.lake.CleanupResult;
import io.flywheel.lake.CompactionPolicy;
import io.flywheel.lake.CompactionResult;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.CleanupRequest;
import io.flywheel.lake.MaintenanceRoutine;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.StreamMatch;

/**
 * Random take from the frames table after many small appends, before and after compaction. One lake gets
 * {@code APPENDS} commits of one episode of {@code ROWS} frames each (the routine off, so nothing compacts it); a copy
 * of it is compacted ({@code flywheel lake compact}'s path) and cleaned up. Both are then read in the same JVM,
 * rounds alternating which goes first: a take of {@code BATCH} random row offsets (a training batch: state, action,
 * timestamp and the image locators) and a take of one random row, each timed around {@link LakeTable#take}; and
 * opening the table (reading its manifest). Every take is checked by value: row r has state[0] = r, in both lakes
 * (compaction keeps the row order).
 *
 * <p>usage: MaintenanceBench DIR [APPENDS=1000] [ROWS=10] [ROUNDS=400] [BATCH=64]. The lake with the appends is kept
 * under DIR and reused by later runs with the same APPENDS and ROWS. Prints one JSON line per lake and one with the
 * ratios.
 */
public final class MaintenanceBench {
    private static final List<String> COLUMNS = List.of("episode_id", "frame_index", "timestamp_ns", "state", "action",
            "images");

    private MaintenanceBench() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int appends = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        int rows = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 400;
        int batch = args.length > 4 ? Integer.parseInt(args[4]) : 64;
        Path appended = dir.resolve("appends-" + appends + "x" + rows);
        Path compacted = dir.resolve("compacted-" + appends + "x" + rows);
        if (!Files.isDirectory(appended.resolve(Lake.META))) {
            build(appended, appends, rows);
        }
        delete(compacted);
        copy(appended, compacted);
        long t0 = System.nanoTime();
        CompactionResult c;
        CleanupResult cleaned;
        try (Lake lake = Lake.open(compacted)) {
            c = lake.compact(CompactionPolicy.defaults(), List.of("frames"));
            cleaned = lake.cleanup(CleanupRequest.olderThan(Duration.ZERO));
        }
        double compactS = (System.nanoTime() - t0) / 1e9;
        CompactionResult.TableCompaction f = c.table("frames");
        System.out.printf(Locale.ROOT, "{\"part\":\"compact\",\"fragments_before\":%d,\"fragments_after\":%d,"
                + "\"rows\":%d,\"compact_and_cleanup_s\":%.2f,\"versions_removed\":%d,\"files_removed\":%d,"
                + "\"bytes_removed\":%d}%n", f.before().fragments(), f.after().fragments(), f.after().rows(), compactS,
                cleaned.table("frames").removedVersions().size(), cleaned.table("frames").filesRemoved(),
                cleaned.table("frames").bytesRemoved());

        try (Lake a = Lake.open(appended); Lake b = Lake.open(compacted); LakeTable ta = a.table("frames");
                LakeTable tb = b.table("frames")) {
            long n = ta.countRows();
            if (tb.countRows() != n) {
                throw new IllegalStateException("compaction changed the row count: " + n + " -> " + tb.countRows());
            }
            Timings before = new Timings();
            Timings after = new Timings();
            SplittableRandom rnd = new SplittableRandom(7);
            int warmup = Math.max(20, rounds / 10);
            for (int r = 0; r < warmup + rounds; r++) {
                long[] offsets = rnd.longs(batch, 0, n).toArray();
                long one = rnd.nextLong(n);
                boolean record = r >= warmup;
                if (r % 2 == 0) {
                    round(ta, offsets, one, record ? before : null);
                    round(tb, offsets, one, record ? after : null);
                } else {
                    round(tb, offsets, one, record ? after : null);
                    round(ta, offsets, one, record ? before : null);
                }
                if (record && r % 10 == 0) {
                    before.open.add(openMs(a));
                    after.open.add(openMs(b));
                }
            }
            print("before compaction", ta, before, batch);
            print("after compaction", tb, after, batch);
            System.out.printf(Locale.ROOT, "{\"part\":\"ratio\",\"take%d_p50\":%.2f,\"take1_p50\":%.2f,\"open_p50\":%.2f}%n",
                    batch, before.take.p(0.5) / after.take.p(0.5), before.one.p(0.5) / after.one.p(0.5),
                    before.open.p(0.5) / after.open.p(0.5));
        }
    }

    /** Latencies in ms. */
    static final class Timings {
        final Series take = new Series();
        final Series one = new Series();
        final Series open = new Series();
    }

    static final class Series {
        private final List<Double> ms = new ArrayList<>();

        void add(double v) {
            ms.add(v);
        }

        double p(double q) {
            double[] s = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            return s[(int) Math.min(s.length - 1, Math.floor(q * s.length))];
        }

        int size() {
            return ms.size();
        }
    }

    private static void round(LakeTable t, long[] offsets, long one, Timings into) {
        long s = System.nanoTime();
        double[] first = take(t, offsets);
        double batchMs = (System.nanoTime() - s) / 1e6;
        s = System.nanoTime();
        double[] single = take(t, new long[] {one});
        double oneMs = (System.nanoTime() - s) / 1e6;
        for (int i = 0; i < offsets.length; i++) {
            if (first[i] != offsets[i]) {
                throw new IllegalStateException(t.uri() + ": row " + offsets[i] + " has state[0] = " + first[i]);
            }
        }
        if (single[0] != one) {
            throw new IllegalStateException(t.uri() + ": row " + one + " has state[0] = " + single[0]);
        }
        if (into != null) {
            into.take.add(batchMs);
            into.one.add(oneMs);
        }
    }

    /** @return state[0] of each row taken, in the order asked */
    private static double[] take(LakeTable t, long[] offsets) {
        double[] out = new double[offsets.length];
        int[] at = {0};
        t.take(offsets, COLUMNS, b -> {
            io.flywheel.lake.ColumnView state = b.column("state");
            for (int i = 0; i < b.rowCount(); i++) {
                out[at[0]++] = state.items().getDouble(state.listStart(i));
            }
        });
        return out;
    }

    private static double openMs(Lake lake) {
        long s = System.nanoTime();
        try (LakeTable t = lake.table("frames")) {
            t.countRows();
        }
        return (System.nanoTime() - s) / 1e6;
    }

    private static void print(String what, LakeTable t, Timings x, int batch) {
        long bytes = t.dataFiles().stream().mapToLong(d -> d.sizeBytes()).sum();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("part", what);
        m.put("version", t.version());
        m.put("data_files", t.dataFiles().size());
        m.put("data_bytes", bytes);
        m.put("takes", x.take.size());
        m.put("take" + batch + "_p50_ms", x.take.p(0.5));
        m.put("take" + batch + "_p99_ms", x.take.p(0.99));
        m.put("take1_p50_ms", x.one.p(0.5));
        m.put("take1_p99_ms", x.one.p(0.99));
        m.put("open_p50_ms", x.open.p(0.5));
        StringBuilder b = new StringBuilder("{");
        m.forEach((k, v) -> b.append(b.length() > 1 ? "," : "").append('"').append(k).append("\":")
                .append(v instanceof String s ? "\"" + s + "\"" : v instanceof Double d
                        ? String.format(Locale.ROOT, "%.3f", d) : String.valueOf(v)));
        System.out.println(b.append('}'));
    }

    /** {@code appends} commits of one episode of {@code rows} frames each, the routine off. */
    private static void build(Path dir, int appends, int rows) throws IOException {
        delete(dir);
        long t0 = System.nanoTime();
        try (Lake lake = Lake.init(dir)) {
            MaintenanceRoutine.configure(lake, 0);
            for (int a = 0; a < appends; a++) {
                List<FrameRow> frames = new ArrayList<>(rows);
                String episode = String.format(Locale.ROOT, "ep-%06d", a);
                for (int j = 0; j < rows; j++) {
                    long r = (long) a * rows + j;
                    double[] state = new double[7];
                    Arrays.fill(state, 0.25 * j);
                    state[0] = r;
                    double[] action = new double[7];
                    Arrays.fill(action, 0.5);
                    long ts = 1_700_000_000_000_000_000L + r * 33_333_333L;
                    List<ImageLocator> images = new ArrayList<>();
                    for (String cam : List.of("/cam/head", "/cam/wrist_left", "/cam/wrist_right")) {
                        images.add(new ImageLocator(cam + "/compressed", "/data/run" + a + ".mcap", 1_000_000L * j,
                                40_000L * j, 39_876, "zstd", 1_000_000L));
                    }
                    frames.add(new FrameRow(episode, j, ts, state, action, 0.04, images,
                            List.of(new StreamMatch("/joint_states", true, 2_000_000L)), List.of()));
                }
                lake.begin("ingest").summary("recording", episode).appendFrames(frames).commit();
                if ((a + 1) % 100 == 0) {
                    System.err.printf(Locale.ROOT, "appends: %d/%d, %.1f commits/s%n", a + 1, appends,
                            (a + 1) / ((System.nanoTime() - t0) / 1e9));
                }
            }
        }
        System.out.printf(Locale.ROOT, "{\"part\":\"build\",\"appends\":%d,\"rows_per_append\":%d,\"seconds\":%.1f}%n",
                appends, rows, (System.nanoTime() - t0) / 1e9);
    }

    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : walk.toList()) {
                Path q = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(q);
                } else {
                    Files.copy(p, q, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
