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
import io.flywheel.lake.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.quality.RuleSet;

/**
 * Ingest throughput against its limit, plain MCAP reading of the same files, in one JVM on one
 * thread: (1) every message of every file read through the indexed reader (chunks decompressed,
 * CRCs checked, nothing decoded); (2) {@code flywheel ingest} of the same files into a new lake
 * (read, decode the hot types, align, quality rules, commit three Lance tables). Prints one JSON
 * line per mode with MB/s (1e6 bytes of MCAP in) and the ratio.
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
        double plain = Double.MAX_VALUE;
        double ingest = Double.MAX_VALUE;
        long messages = 0;
        long frames = 0;
        for (int r = 0; r < runs + 1; r++) { // the first round warms the JIT and the page cache
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
            Path lakeDir = scratch.resolve("lake-" + r);
            delete(lakeDir);
            long t1 = System.nanoTime();
            try (Lake lake = Lake.init(lakeDir)) {
                IngestJob.Result res = IngestJob.run(lake, List.of(fleet), IngestOptions.defaults(),
                        IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
                frames = res.frames();
            }
            double i = (System.nanoTime() - t1) / 1e9;
            delete(lakeDir);
            if (r > 0) {
                plain = Math.min(plain, p);
                ingest = Math.min(ingest, i);
            }
        }
        System.out.printf(Locale.ROOT, "{\"mode\":\"plain-read\",\"files\":%d,\"bytes\":%d,\"messages\":%d,\"seconds\":%.3f,"
                + "\"MBps\":%.1f}%n", files.size(), bytes, messages, plain, bytes / 1e6 / plain);
        System.out.printf(Locale.ROOT, "{\"mode\":\"ingest\",\"files\":%d,\"bytes\":%d,\"frames\":%d,\"seconds\":%.3f,"
                + "\"MBps\":%.1f,\"frames_per_s\":%.0f,\"ratio_vs_plain_read\":%.2f}%n", files.size(), bytes, frames, ingest,
                bytes / 1e6 / ingest, frames / ingest, plain / ingest);
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
