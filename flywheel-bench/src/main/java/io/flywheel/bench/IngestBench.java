package io.flywheel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.quality.RuleSet;

/**
 * Ingest throughput against its limit, plain MCAP reading of the same files, in one JVM on one
 * thread: (1) every message of every file read through the indexed reader (chunks decompressed,
 * CRCs checked, nothing decoded); (2) {@code flywheel ingest} of the same files into a new lake
 * (read, decode the hot types, align, quality rules, commit three Lance tables). The two take turns, one
 * round after the other, after a warm-up round; prints one JSON line per round (both times and their ratio),
 * then one per mode (median and best time, MB/s = 1e6 bytes of MCAP in per median second) and the ratio of
 * plain reading time to ingest time: the median of the rounds' ratios (what to quote on a shared, noisy
 * machine: both sides of a round see about the same load), their spread, and best over best. The same for
 * the CPU time the process used (all its threads, pinned to one core): on a machine shared with other work
 * this is the steadier measure of work per core, as waiting for the core is not counted.
 *
 * <p>usage: IngestBench FLEET_DIR SCRATCH_DIR [RUNS]
 */
public final class IngestBench {
    private IngestBench() {}

    public static void main(String[] args) throws Exception {
        Path fleet = Path.of(args[0]);
        Path scratch = Path.of(args[1]);
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(fleet)) {
            s.filter(p -> p.toString().endsWith(".mcap")).sorted().forEach(files::add);
        }
        long bytes = 0;
        for (Path f : files) {
            bytes += Files.size(f);
        }
        List<Double> plainRuns = new ArrayList<>();
        List<Double> ingestRuns = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        List<Double> cpuRatios = new ArrayList<>();
        List<Double> plainCpu = new ArrayList<>();
        List<Double> ingestCpu = new ArrayList<>();
        long messages = 0;
        long frames = 0;
        for (int r = 0; r < runs + 1; r++) { // the first round warms the JIT and the page cache
            long c0 = cpuNanos();
            long t0 = System.nanoTime();
            messages = 0;
            for (Path f : files) {
                try (McapMessages m = McapMessages.open(f, McapIndexedReader.ReadOptions.all())) {
                    while (m.next() != null) {
                        messages++;
                    }
                }
            }
            double p = (System.nanoTime() - t0) / 1e9;
            double pc = (cpuNanos() - c0) / 1e9;
            Path lakeDir = scratch.resolve("lake-" + r);
            delete(lakeDir);
            long c1 = cpuNanos();
            long t1 = System.nanoTime();
            try (Lake lake = Lake.init(lakeDir)) {
                IngestJob.Result res = IngestJob.run(lake, List.of(fleet), IngestOptions.defaults(),
                        IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
                frames = res.frames();
            }
            double i = (System.nanoTime() - t1) / 1e9;
            double ic = (cpuNanos() - c1) / 1e9;
            delete(lakeDir);
            if (r > 0) {
                plainRuns.add(p);
                ingestRuns.add(i);
                ratios.add(p / i);
                plainCpu.add(pc);
                ingestCpu.add(ic);
                cpuRatios.add(pc / ic);
                System.out.printf(Locale.ROOT, "{\"round\":%d,\"plain_s\":%.3f,\"ingest_s\":%.3f,\"ratio\":%.3f,"
                        + "\"plain_cpu_s\":%.3f,\"ingest_cpu_s\":%.3f,\"cpu_ratio\":%.3f}%n", r, p, i, p / i, pc, ic, pc / ic);
            }
        }
        double plain = median(plainRuns);
        double ingest = median(ingestRuns);
        System.out.printf(Locale.ROOT, "{\"mode\":\"plain-read\",\"files\":%d,\"bytes\":%d,\"messages\":%d,"
                + "\"median_s\":%.3f,\"best_s\":%.3f,\"MBps\":%.1f}%n", files.size(), bytes, messages, plain,
                min(plainRuns), bytes / 1e6 / plain);
        System.out.printf(Locale.ROOT, "{\"mode\":\"ingest\",\"files\":%d,\"bytes\":%d,\"frames\":%d,\"median_s\":%.3f,"
                + "\"best_s\":%.3f,\"MBps\":%.1f,\"frames_per_s\":%.0f}%n", files.size(), bytes, frames, ingest,
                min(ingestRuns), bytes / 1e6 / ingest, frames / ingest);
        System.out.printf(Locale.ROOT, "{\"ratio_vs_plain_read\":{\"median_of_rounds\":%.3f,\"min\":%.3f,\"max\":%.3f,"
                + "\"best_over_best\":%.3f,\"rounds\":%d}}%n", median(ratios), min(ratios), max(ratios),
                min(plainRuns) / min(ingestRuns), ratios.size());
        System.out.printf(Locale.ROOT, "{\"cpu_ratio_vs_plain_read\":{\"median_of_rounds\":%.3f,\"min\":%.3f,\"max\":%.3f,"
                + "\"plain_cpu_median_s\":%.3f,\"ingest_cpu_median_s\":%.3f}}%n", median(cpuRatios), min(cpuRatios),
                max(cpuRatios), median(plainCpu), median(ingestCpu));
    }

    /** CPU time of the whole process (every thread: ours, Lance's native ones, GC, JIT), ns; the JVM is on one core. */
    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static double median(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    private static double min(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    private static double max(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
