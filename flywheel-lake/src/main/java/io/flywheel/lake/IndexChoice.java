package io.flywheel.lake;

/**
 * How an embedding column is searched: a flat exact scan, or an IVF-PQ index (H. Jegou, M. Douze, C. Schmid, "Product
 * Quantization for Nearest Neighbor Search", IEEE TPAMI 33(1), 2011: inverted file + product quantisation, re-ranked
 * by exact distance with a refine factor).
 *
 * @param kind flat scan or IVF-PQ index
 * @param column embedding column
 * @param rows rows in the table (or pool)
 * @param dim embedding dimension D
 * @param partitions IVF partitions (0 for flat)
 * @param subVectors PQ sub-vectors (0 for flat)
 * @param reason why, in words
 */
public record IndexChoice(Kind kind, String column, long rows, int dim, int partitions, int subVectors, String reason) {
    /** How a column is searched. */
    public enum Kind { FLAT, IVF_PQ }

    /**
     * The index a column of {@code rows} vectors of dimension {@code dim} gets under {@code options}: flat below
     * {@link VectorIndexOptions#flatBelowRows()}, else IVF-PQ with the options' partitions and sub-vectors (see
     * {@link VectorIndexOptions} for the defaults).
     *
     * @throws IllegalArgumentException when a given sub-vector count does not divide D
     */
    public static IndexChoice choose(long rows, int dim, VectorIndexOptions options) {
        if (rows < options.flatBelowRows()) {
            return new IndexChoice(Kind.FLAT, options.column(), rows, dim, 0, 0, rows + " rows < "
                    + options.flatBelowRows() + ": a flat exact scan is cheap, and IVF training needs many rows");
        }
        int partitions = options.partitions() > 0 ? options.partitions() : (int) Math.max(1, Math.round(Math.sqrt(rows)));
        int sub = options.subVectors();
        if (sub == 0) {
            sub = 1;
            for (int s = Math.max(1, dim / 4); s >= 1; s--) {
                if (dim % s == 0) {
                    sub = s;
                    break;
                }
            }
        } else if (dim % sub != 0) {
            throw new IllegalArgumentException(sub + " PQ sub-vectors do not divide dimension " + dim);
        }
        return new IndexChoice(Kind.IVF_PQ, options.column(), rows, dim, partitions, sub, rows + " rows >= "
                + options.flatBelowRows() + ": IVF-PQ, " + partitions + " partitions (~sqrt(rows)), " + sub
                + " sub-vectors of " + dim / sub + " dimensions, 8 bits, cosine");
    }
}
