package io.flywheel.spark;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.NearPairs;
import io.flywheel.curate.PhashBands;
import scala.Tuple2;

/**
 * The near-pair search of dedup on Spark. Input: staging files written by the lake side, output: the verified pairs
 * only, written by the driver as staging files for the lake side, which builds the complete-linkage groups.
 *
 * <p>Files (big-endian, fixed-width records, so {@code binaryRecords} splits them anywhere):
 * <ul>
 *   <li>{@code hashes.bin}: the distinct master-camera pHash values, ascending, int64 each; node i is record i.</li>
 *   <li>{@code vectors.bin}: the episode embeddings (L2-normalised), {@code dim} float32 each; episode i is
 *       record i.</li>
 *   <li>{@code frame_pairs.bin}, {@code episode_pairs.bin} (written): int32 a, int32 b ({@code a < b}), float32
 *       distance (bits for frames, {@code 1 - cos} for episodes), one record per pair within the threshold.</li>
 * </ul>
 *
 * <p>Frames: each value goes to its {@code t + 1} band buckets ({@link PhashBands}), the bucket is the shuffle key,
 * each bucket's task verifies its candidates by exact Hamming distance and reports a pair on its first shared band
 * only: every pair within {@code t}, once. Episodes: the vectors are cut into blocks; every block pair (including a
 * block with itself) is a shuffle key, each task computes the exact cosine distance of its block pair's vector pairs
 * ({@link ExactSearch#cosineDistance}, as the one-machine search does): every pair within the threshold, once.
 */
public final class SparkDedup {
    private SparkDedup() {}

    /**
     * Every distinct-value pair within {@code maxDistance} bits, written to {@code out}.
     *
     * @return the number of pairs
     */
    public static long framePairs(SparkSession spark, Path hashes, int maxDistance, int partitions, Path out)
            throws IOException {
        if (Files.size(hashes) < 16) { // fewer than two values: no pair
            write(List.of(), out);
            return 0;
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JavaPairRDD<byte[], Long> nodes = jsc.binaryRecords(hashes.toString(), 8).zipWithIndex();
        List<int[]> pairs = nodes.flatMapToPair(e -> {
            long v = ByteBuffer.wrap(e._1()).getLong();
            long[] buckets = PhashBands.forThreshold(maxDistance).buckets(v);
            List<Tuple2<Long, long[]>> o = new ArrayList<>(buckets.length);
            for (long b : buckets) {
                o.add(new Tuple2<>(b, new long[] {v, e._2()}));
            }
            return o.iterator();
        }).groupByKey(partitions).flatMap(bucket -> {
            List<long[]> members = new ArrayList<>();
            bucket._2().forEach(members::add);
            if (members.size() < 2) {
                return java.util.Collections.<int[]>emptyIterator();
            }
            long[] values = new long[members.size()];
            int[] ids = new int[members.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = members.get(i)[0];
                ids[i] = Math.toIntExact(members.get(i)[1]);
            }
            return toRecords(PhashBands.forThreshold(maxDistance).pairs(bucket._1(), values, ids));
        }).collect();
        write(pairs, out);
        return pairs.size();
    }

    /** As {@link #framePairs}, for the {@code dim}-dimensional episode vectors within cosine distance {@code max}. */
    public static long episodePairs(SparkSession spark, Path vectors, int dim, long rows, double max, int partitions,
            Path out) throws IOException {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int blockRows = (int) Math.max(64, (rows + partitions - 1) / Math.max(1, partitions));
        int blocks = (int) Math.max(1, (rows + blockRows - 1) / blockRows);
        List<int[]> pairs = rows < 2 ? List.of() : jsc.binaryRecords(vectors.toString(), 4 * dim).zipWithIndex()
                .flatMapToPair(e -> {
                    int i = Math.toIntExact(e._2());
                    int b = i / blockRows;
                    List<Tuple2<Integer, Tuple2<Integer, byte[]>>> o = new ArrayList<>(blocks);
                    for (int c = 0; c < blocks; c++) {
                        o.add(new Tuple2<>(Math.min(b, c) * blocks + Math.max(b, c), new Tuple2<>(i, e._1())));
                    }
                    return o.iterator();
                }).groupByKey(Math.min(partitions, blocks * (blocks + 1) / 2)).flatMap(key -> {
                    List<Integer> ids = new ArrayList<>();
                    List<float[]> vs = new ArrayList<>();
                    for (Tuple2<Integer, byte[]> t : key._2()) {
                        ids.add(t._1());
                        float[] v = new float[dim];
                        ByteBuffer.wrap(t._2()).asFloatBuffer().get(v);
                        vs.add(v);
                    }
                    int lo = key._1() / blocks;
                    int hi = key._1() % blocks;
                    List<int[]> o = new ArrayList<>();
                    for (int x = 0; x < ids.size(); x++) {
                        for (int y = 0; y < ids.size(); y++) {
                            int i = ids.get(x);
                            int j = ids.get(y);
                            // block pair (lo, hi): i in lo, j in hi, i < j (within one block: each pair once)
                            if (i >= j || i / blockRows != lo || j / blockRows != hi) {
                                continue;
                            }
                            float d = ExactSearch.cosineDistance(vs.get(x), vs.get(y));
                            if (d <= max) {
                                o.add(new int[] {i, j, Float.floatToIntBits(Math.max(0f, d))});
                            }
                        }
                    }
                    return o.iterator();
                }).collect();
        write(pairs, out);
        return pairs.size();
    }

    private static Iterator<int[]> toRecords(NearPairs p) {
        List<int[]> o = new ArrayList<>(p.size());
        for (int k = 0; k < p.size(); k++) {
            o.add(new int[] {p.a(k), p.b(k), Float.floatToIntBits(p.distance(k))});
        }
        return o.iterator();
    }

    private static void write(List<int[]> pairs, Path out) throws IOException {
        Path tmp = out.resolveSibling(out.getFileName() + ".part");
        try (DataOutputStream o = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp)))) {
            for (int[] p : pairs) {
                o.writeInt(p[0]);
                o.writeInt(p[1]);
                o.writeInt(p[2]);
            }
        }
        Files.move(tmp, out, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}
