package io.flywheel.align;

/**
 * The alignment of one stream to the frames of an {@link Alignment}, in columns: entry {@code f} of every array
 * belongs to frame {@code f} of {@link Alignment#frameTimesNs()}. Arrays are shared, do not modify them.
 *
 * <ul>
 *   <li>{@link #index()}: {@code int[frames]}, the matched message's position in the stream's sorted order
 *       (use {@link TopicStream#payload(int)} to get the caller's reference), or {@code -1} when unmatched (value null).
 *       For {@link AlignMethod#INTERPOLATE} this is the lower neighbour (latest message at or before the frame).</li>
 *   <li>{@link #residualNs()}: {@code long[frames]}, signed residual {@code dt = matched corrected time - frame time}
 *       in ns (negative: the message is earlier than the frame; asof residuals are always &le; 0), or
 *       {@link #NO_RESIDUAL} when unmatched. {@code |dt|} is {@code Math.abs(residualNs[f])}. For interpolate it is
 *       the residual of the nearer neighbour (ties to the lower one); 0 at an exact hit.</li>
 *   <li>{@link #flags()}: {@code byte[frames]}, 0 when matched, else a bit set of {@link #FLAG_NO_MESSAGE},
 *       {@link #FLAG_BEYOND_TOLERANCE}, {@link #FLAG_GAP}.</li>
 *   <li>Interpolate only (null otherwise): {@link #upperIndex()} {@code int[frames]} (upper neighbour, equal to
 *       {@code index} at an exact hit, -1 when unmatched), {@link #weight()} {@code double[frames]} in [0, 1]
 *       (value = (1 - w) * lower + w * upper; 0 at an exact hit, NaN when unmatched), and, when the stream carries
 *       vectors, {@link #values()} flat {@code double[frames * dim]} with the interpolated vector (quaternion groups by
 *       slerp, unit norm), NaN when unmatched.</li>
 * </ul>
 */
public final class StreamAlignment {
    /** Residual of an unmatched frame. */
    public static final long NO_RESIDUAL = Long.MIN_VALUE;
    /** No message on the side the method needs: empty stream, asof frame before the first message, interpolate frame
     * outside [first, last] message time. */
    public static final byte FLAG_NO_MESSAGE = 1;
    /** The candidate message (nearest / asof) is farther from the frame than the tolerance. */
    public static final byte FLAG_BEYOND_TOLERANCE = 2;
    /** Interpolate: the two neighbours are farther apart than the tolerance (no interpolation across a gap). */
    public static final byte FLAG_GAP = 4;

    private final String stream;
    private final StreamPolicy policy;
    private final boolean master;
    private final int[] index;
    private final long[] residualNs;
    private final byte[] flags;
    private final int[] upperIndex;
    private final double[] weight;
    private final double[] values;
    private final int dim;
    private final int droppedFrames;

    StreamAlignment(String stream, StreamPolicy policy, boolean master, int[] index, long[] residualNs, byte[] flags,
                    int[] upperIndex, double[] weight, double[] values, int dim, int droppedFrames) {
        this.stream = stream;
        this.policy = policy;
        this.master = master;
        this.index = index;
        this.residualNs = residualNs;
        this.flags = flags;
        this.upperIndex = upperIndex;
        this.weight = weight;
        this.values = values;
        this.dim = dim;
        this.droppedFrames = droppedFrames;
    }

    /** Stream name. */
    public String stream() { return stream; }
    /** The policy applied. */
    public StreamPolicy policy() { return policy; }
    /** True when this stream is the master clock (matched to itself, residual 0). */
    public boolean isMaster() { return master; }
    /** Matched message index per frame (sorted stream order), -1 when unmatched. */
    public int[] index() { return index; }
    /** Signed residual per frame in ns, {@link #NO_RESIDUAL} when unmatched. */
    public long[] residualNs() { return residualNs; }
    /** Flags per frame (0 = matched). */
    public byte[] flags() { return flags; }
    /** Interpolate: upper neighbour per frame; null for other methods. */
    public int[] upperIndex() { return upperIndex; }
    /** Interpolate: weight of the upper neighbour per frame; null for other methods. */
    public double[] weight() { return weight; }
    /** Interpolate with vectors: flat interpolated values {@code double[frames * dim]}; null otherwise. */
    public double[] values() { return values; }
    /** Vector dimension of {@link #values()}, 0 when none. */
    public int dim() { return dim; }
    /** Number of frames (entries per array). */
    public int frames() { return index.length; }
    /** True when frame {@code f} has a value for this stream. */
    public boolean matched(int f) { return index[f] >= 0; }
    /** {@code |dt|} of frame {@code f} in ns, or -1 when unmatched. */
    public long absResidualNs(int f) { return index[f] >= 0 ? Math.abs(residualNs[f]) : -1; }
    /**
     * Frames (of the full master sequence, before any drop) that were dropped because this stream had no match and its
     * policy is {@link MissPolicy#DROP_FRAME}; 0 for {@link MissPolicy#FLAG}. A frame missed by two dropping streams
     * counts for both.
     */
    public int droppedFrames() { return droppedFrames; }

    /** Residual statistics over the frames kept (see {@link ResidualStats}). */
    public ResidualStats stats() { return ResidualStats.of(this); }
}
