package io.flywheel.cli;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.curate.NearPairs;
import io.flywheel.curate.pool.DedupJob;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code flywheel spark dedup LAKE}: the groups of {@code flywheel dedup}, the near pairs found by a Spark job (pHash
 * bands and block pairs of embeddings as shuffle keys, exact distances in the tasks); the groups are built and
 * committed here, as {@code flywheel dedup} does, in one lake transaction.
 */
@Command(name = "dedup", mixinStandardHelpOptions = true, description = "Near-duplicate episodes and frames as"
        + " flywheel dedup finds them (complete linkage: groups never chain), the pairs searched on Spark: the lake"
        + " side stages the distinct master-camera pHashes and the episode embeddings, executors find and verify the"
        + " pairs (pHash bands, embedding block pairs), the driver gets only the verified pairs; the groups are"
        + " committed into the lake in one transaction, the same rows flywheel dedup writes.")
final class SparkDedupCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    LakeLocation lake;

    @Option(names = "--master", paramLabel = "URL", defaultValue = "local[2]", description = "Spark master: local[N],"
            + " local[*] or spark://HOST:PORT (default: ${DEFAULT-VALUE}); on a cluster --staging must be a folder"
            + " every executor sees")
    String master;

    @Option(names = "--staging", paramLabel = "DIR", description = "folder for the staged hashes, embeddings and"
            + " pairs (default: a new folder in the temporary directory); removed at the end")
    Path staging;

    @Option(names = "--partitions", defaultValue = "8", description = "shuffle partitions (default ${DEFAULT-VALUE})")
    int partitions;

    @Option(names = "--episode-threshold", defaultValue = "0.0005",
            description = "cosine distance for episodes (default ${DEFAULT-VALUE}; calibrate with `dedup sweep`)")
    double episodeThreshold;

    @Option(names = "--frame-threshold", defaultValue = "4",
            description = "Hamming distance in bits for frames; -1 skips frames (default ${DEFAULT-VALUE})")
    int frameThreshold;

    @Option(names = "--conf", paramLabel = "KEY=VALUE", description = "a Spark setting for the job, repeatable (e.g."
            + " spark.jars=flywheel-spark-...-job.jar or spark.executor.extraClassPath=... on a cluster)")
    List<String> conf = new ArrayList<>();

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() throws IOException {
        SparkJob.checkMaster(spec, master);
        Usage.require(spec, episodeThreshold >= 0 && episodeThreshold <= 2,
                "--episode-threshold is a cosine distance in [0, 2], got " + episodeThreshold);
        Usage.require(spec, frameThreshold >= -1 && frameThreshold <= 63,
                "--frame-threshold is a Hamming distance in [0, 63] bits (-1: skip frames), got " + frameThreshold);
        Usage.require(spec, partitions >= 1, "--partitions must be >= 1, got " + partitions);
        for (String kv : conf) {
            Usage.require(spec, kv.indexOf('=') > 0, "--conf: expected KEY=VALUE, got '" + kv + "'");
        }
        Path dir = staging != null ? Files.createDirectories(staging.toAbsolutePath())
                : Files.createTempDirectory("flywheel-spark-dedup");
        long t0 = System.nanoTime();
        double[] jobSecs = {0};
        long[] found = {0, 0};
        DedupJob.Result r;
        try (Lake l = lake.open()) {
            r = DedupJob.run(l, new DedupJob.Options(episodeThreshold, frameThreshold), (v, t, hashes, bits) -> {
                try {
                    int dim = stage(dir, v, hashes);
                    List<String> args = new ArrayList<>(List.of("--master", master, "--staging", dir.toString(),
                            "--partitions", String.valueOf(partitions), "--episode-threshold", String.valueOf(t),
                            "--dim", String.valueOf(Math.max(1, dim)), "--rows", String.valueOf(v.length)));
                    for (String kv : conf) {
                        args.addAll(List.of("--conf", kv));
                    }
                    if (hashes != null) {
                        args.addAll(List.of("--frame-threshold", String.valueOf(bits)));
                    }
                    long j0 = System.nanoTime();
                    int rc = SparkJob.run("io.flywheel.spark.SparkDedupMain", args, System.err);
                    jobSecs[0] = (System.nanoTime() - j0) / 1e9;
                    if (rc != 0 || !Files.isRegularFile(dir.resolve("summary.json"))) {
                        throw new io.flywheel.error.StorageUnavailableException("the Spark job failed (exit " + rc
                                + "; its output is above); nothing was committed");
                    }
                    JsonNode summary = Json.MAPPER.readTree(dir.resolve("summary.json").toFile());
                    found[0] = summary.path("episode_pairs").asLong();
                    found[1] = summary.path("frame_pairs").asLong();
                    NearPairs ep = v.length < 2 ? NearPairs.of(new int[0], new int[0], new float[0])
                            : pairs(dir.resolve("episode_pairs.bin"));
                    NearPairs fp = hashes == null ? null : pairs(dir.resolve("frame_pairs.bin"));
                    return new DedupJob.Pairs(ep, fp);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while the Spark job ran", e);
                }
            });
        } finally {
            if (staging == null) {
                deleteTree(dir);
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        if (json.enabled()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("ok", true);
            m.put("master", master);
            m.put("episodes", r.episodes());
            m.put("episode_groups", r.episodeGroups());
            m.put("episodes_removed", r.episodesRemoved());
            m.put("episode_threshold", episodeThreshold);
            m.put("episode_pairs", found[0]);
            m.put("frames", r.frames());
            m.put("frame_groups", r.frameGroups());
            m.put("frames_removed", r.framesRemoved());
            m.put("frame_threshold", frameThreshold);
            m.put("frame_pairs", found[1]);
            m.put("embedding_model", r.model());
            m.put("episode_groups_version", r.episodeGroupsVersion());
            m.put("frame_groups_version", r.frameGroupsVersion());
            m.put("job_seconds", jobSecs[0]);
            m.put("seconds", secs);
            Json.print(System.out, m);
            return 0;
        }
        System.out.printf(Locale.ROOT, "spark dedup on %s: episodes %d -> %d kept (%d near-duplicates, %d pair(s)"
                        + " within cosine distance %.4f)%s; episode_groups v%d%s; job %.1f s, total %.1f s%n", master,
                r.episodes(), r.episodeGroups(), r.episodesRemoved(), found[0], episodeThreshold,
                frameThreshold < 0 ? "" : String.format(Locale.ROOT, ", master-camera frames %d -> %d kept (%d"
                        + " near-duplicates, %d pair(s) within %d bits)", r.frames(), r.frameGroups(),
                        r.framesRemoved(), found[1], frameThreshold),
                r.episodeGroupsVersion(), frameThreshold < 0 ? "" : ", frame_groups v" + r.frameGroupsVersion(),
                jobSecs[0], secs);
        return 0;
    }

    /** Writes vectors.bin and hashes.bin (big-endian records, see io.flywheel.spark.SparkDedup). @return the dim */
    private static int stage(Path dir, float[][] vectors, long[] hashes) throws IOException {
        int dim = vectors.length == 0 ? 0 : vectors[0].length;
        try (DataOutputStream o = new DataOutputStream(new BufferedOutputStream(
                Files.newOutputStream(dir.resolve("vectors.bin"))))) {
            for (float[] v : vectors) {
                for (float x : v) {
                    o.writeFloat(x);
                }
            }
        }
        if (hashes != null) {
            try (DataOutputStream o = new DataOutputStream(new BufferedOutputStream(
                    Files.newOutputStream(dir.resolve("hashes.bin"))))) {
                for (long h : hashes) {
                    o.writeLong(h);
                }
            }
        }
        return dim;
    }

    /** @return the pairs of a pairs file (int32 a, int32 b, float32 distance per record) */
    private static NearPairs pairs(Path file) throws IOException {
        long n = Files.size(file) / 12;
        int[] a = new int[Math.toIntExact(n)];
        int[] b = new int[a.length];
        float[] d = new float[a.length];
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
            for (int i = 0; i < a.length; i++) {
                a[i] = in.readInt();
                b[i] = in.readInt();
                d[i] = in.readFloat();
            }
        } catch (EOFException e) {
            throw new IOException(file + ": pairs file ends inside a record", e);
        }
        return NearPairs.of(a, b, d);
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
