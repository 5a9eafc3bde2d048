package io.flywheel.curate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

/**
 * Exact (brute-force) cosine search over L2-normalised float32 vectors, by dot products in
 * parallel on the common fork-join pool: the ground truth for recall@k of an approximate index and
 * the search for pools too small to index. Distances are cosine distances {@code 1 - dot} (0..2).
 * Ties go to the lower row. Holds the vectors row-major in one array; immutable.
 */
public final class ExactSearch {
    /** Largest allowed deviation of a vector's L2 norm from 1. */
    public static final double NORM_TOLERANCE = 1e-3;
    private static final int BLOCK = 4096;

    private final float[] data;
    private final int dim;
    private final int rows;

    private ExactSearch(float[] data, int dim) {
        this.data = data;
        this.dim = dim;
        this.rows = dim == 0 ? 0 : data.length / dim;
    }

    /**
     * @param vectors L2-normalised vectors (copied), all of one dimension
     * @throws IllegalArgumentException naming the first row of another dimension or a norm off 1
     */
    public static ExactSearch of(float[][] vectors) {
        int dim = vectors.length == 0 ? 0 : vectors[0].length;
        float[] data = new float[vectors.length * dim];
        for (int i = 0; i < vectors.length; i++) {
            if (vectors[i].length != dim) {
                throw new IllegalArgumentException("vector " + i + " has dimension " + vectors[i].length + ", expected " + dim);
            }
            System.arraycopy(vectors[i], 0, data, i * dim, dim);
        }
        return ofRows(data, dim);
    }

    /**
     * @param rowMajor {@code rows * dim} floats, row i at {@code [i * dim, (i + 1) * dim)}; not copied:
     *     the caller must not change it afterwards
     * @param dim dimension D, at least 1
     * @throws IllegalArgumentException when the length is not a multiple of dim or a norm is off 1
     */
    public static ExactSearch ofRows(float[] rowMajor, int dim) {
        if (dim < 1 && rowMajor.length > 0 || dim > 0 && rowMajor.length % dim != 0) {
            throw new IllegalArgumentException(rowMajor.length + " floats are not rows of dimension " + dim);
        }
        ExactSearch s = new ExactSearch(rowMajor, Math.max(dim, 0));
        for (int i = 0; i < s.rows; i++) {
            double norm = Math.sqrt(dot(rowMajor, i * dim, rowMajor, i * dim, dim));
            if (Math.abs(norm - 1) > NORM_TOLERANCE) {
                throw new IllegalArgumentException("vector " + i + " has L2 norm " + norm + ", expected 1 (+-"
                        + NORM_TOLERANCE + "): normalise embeddings first");
            }
        }
        return s;
    }

    /** @return number of rows */
    public int rows() {
        return rows;
    }

    /** @return dimension D */
    public int dim() {
        return dim;
    }

    /** @return row {@code i} (copy) */
    public float[] row(int i) {
        return Arrays.copyOfRange(data, i * dim, (i + 1) * dim);
    }

    /**
     * The k nearest rows to {@code query} by cosine distance, nearest first, rows split across
     * threads.
     *
     * @param query float32[D], L2-normalised
     * @param k number of neighbours, at least 1
     * @throws IllegalArgumentException when the query dimension differs or k &lt; 1
     */
    public List<Neighbour> knn(float[] query, int k) {
        return knn(query, k, null);
    }

    /**
     * As {@link #knn(float[], int)}, over the rows accepted by {@code rowFilter} only (null = all).
     */
    public List<Neighbour> knn(float[] query, int k, IntPredicate rowFilter) {
        checkQuery(query, k);
        int blocks = (rows + BLOCK - 1) / BLOCK;
        TopK[] parts = new TopK[blocks];
        IntStream.range(0, blocks).parallel().forEach(b -> {
            TopK top = new TopK(k);
            for (int i = b * BLOCK, end = Math.min(rows, i + BLOCK); i < end; i++) {
                if (rowFilter == null || rowFilter.test(i)) {
                    top.offer(i, 1f - dot(query, 0, data, i * dim, dim));
                }
            }
            parts[b] = top;
        });
        TopK all = new TopK(k);
        for (TopK t : parts) {
            for (int q = 0; q < t.size; q++) {
                all.offer(t.row[q], t.dist[q]);
            }
        }
        return all.toList();
    }

    /**
     * The k nearest rows of each query, queries split across threads (each query single-threaded):
     * the throughput mode.
     */
    public List<List<Neighbour>> knnAll(float[][] queries, int k) {
        for (float[] q : queries) {
            checkQuery(q, k);
        }
        @SuppressWarnings("unchecked")
        List<Neighbour>[] out = new List[queries.length];
        IntStream.range(0, queries.length).parallel().forEach(qi -> {
            TopK top = new TopK(k);
            float[] q = queries[qi];
            for (int i = 0; i < rows; i++) {
                top.offer(i, 1f - dot(q, 0, data, i * dim, dim));
            }
            out[qi] = top.toList();
        });
        return Arrays.asList(out);
    }

    /**
     * Every pair of rows {@code i < j} with cosine distance at most {@code maxCosineDistance}:
     * {@code rows^2 / 2} dot products.
     */
    public NearPairs pairsWithin(double maxCosineDistance) {
        int blocks = (rows + 63) / 64;
        HammingSearch.PairBuffer[] out = new HammingSearch.PairBuffer[blocks];
        IntStream.range(0, blocks).parallel().forEach(b -> {
            HammingSearch.PairBuffer buf = new HammingSearch.PairBuffer();
            for (int i = b * 64, end = Math.min(rows, i + 64); i < end; i++) {
                for (int j = i + 1; j < rows; j++) {
                    float d = 1f - dot(data, i * dim, data, j * dim, dim);
                    if (d <= maxCosineDistance) {
                        buf.add(i, j, Math.max(0f, d));
                    }
                }
            }
            out[b] = buf;
        });
        return HammingSearch.PairBuffer.concat(out);
    }

    /** @return cosine distance {@code 1 - dot(a, b)} of two L2-normalised vectors of one dimension */
    public static float cosineDistance(float[] a, float[] b) {
        if (a.length != b.length) {
            throw new IllegalArgumentException("dimensions differ: " + a.length + " and " + b.length);
        }
        return 1f - dot(a, 0, b, 0, a.length);
    }

    /** @return a copy of {@code v} scaled to L2 norm 1 @throws IllegalArgumentException for a zero vector */
    public static float[] normalise(float[] v) {
        double s = 0;
        for (float x : v) {
            s += (double) x * x;
        }
        if (s == 0 || !Double.isFinite(s)) {
            throw new IllegalArgumentException("cannot normalise a vector of norm " + Math.sqrt(s));
        }
        float inv = (float) (1 / Math.sqrt(s));
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = v[i] * inv;
        }
        return out;
    }

    private void checkQuery(float[] query, int k) {
        if (k < 1) {
            throw new IllegalArgumentException("k = " + k + ": expected >= 1");
        }
        if (query.length != dim) {
            throw new IllegalArgumentException("query has dimension " + query.length + ", the vectors " + dim);
        }
    }

    static float dot(float[] a, int ao, float[] b, int bo, int n) {
        float s0 = 0;
        float s1 = 0;
        float s2 = 0;
        float s3 = 0;
        int i = 0;
        for (; i + 3 < n; i += 4) {
            s0 += a[ao + i] * b[bo + i];
            s1 += a[ao + i + 1] * b[bo + i + 1];
            s2 += a[ao + i + 2] * b[bo + i + 2];
            s3 += a[ao + i + 3] * b[bo + i + 3];
        }
        for (; i < n; i++) {
            s0 += a[ao + i] * b[bo + i];
        }
        return (s0 + s1) + (s2 + s3);
    }

    /** Bounded best-k list, sorted by (distance, row). */
    static final class TopK {
        final int[] row;
        final float[] dist;
        int size;

        TopK(int k) {
            row = new int[k];
            dist = new float[k];
        }

        void offer(int r, float d) {
            int k = row.length;
            if (size == k && !(d < dist[k - 1] || d == dist[k - 1] && r < row[k - 1])) {
                return;
            }
            int pos = size == k ? k - 1 : size++;
            while (pos > 0 && (d < dist[pos - 1] || d == dist[pos - 1] && r < row[pos - 1])) {
                row[pos] = row[pos - 1];
                dist[pos] = dist[pos - 1];
                pos--;
            }
            row[pos] = r;
            dist[pos] = d;
        }

        List<Neighbour> toList() {
            List<Neighbour> out = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                out.add(new Neighbour(row[i], dist[i]));
            }
            return out;
        }
    }
}
