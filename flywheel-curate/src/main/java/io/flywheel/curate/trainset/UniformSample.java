package io.flywheel.curate.trainset;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * A seeded uniform sample without replacement, stable under pool growth.
 *
 * <p>Each id gets the key {@code SHA-256(seed + ":" + id)} (first 8 bytes, unsigned); the sample
 * is the {@code round(ratio * n)} ids with the smallest keys. Every subset of that size is equally
 * likely (the keys are independent and uniform), the same seed and pool give the same sample on
 * any machine, and an id's key does not depend on the rest of the pool: when episodes are added,
 * a new sample at the same seed keeps the old members whose keys still rank inside the cut
 * (bottom-k sampling, as in Cohen &amp; Kaplan, "Summarizing data using bottom-k sketches", PODC 2007).
 */
public final class UniformSample {
    private UniformSample() {}

    /**
     * @param ids the pool (duplicates are ignored)
     * @param ratio share to take, in [0, 1]
     * @param seed the seed
     * @return the sampled ids, ordered by key
     * @throws IllegalArgumentException when ratio is outside [0, 1]
     */
    public static List<String> select(Collection<String> ids, double ratio, long seed) {
        if (!(ratio >= 0 && ratio <= 1)) {
            throw new IllegalArgumentException("sample ratio must be in [0, 1], got " + ratio);
        }
        List<String> pool = new ArrayList<>(new java.util.TreeSet<>(ids));
        pool.sort(Comparator.comparingLong((String id) -> key(seed, id)).thenComparing(Comparator.naturalOrder()));
        int k = (int) Math.round(ratio * pool.size());
        return List.copyOf(pool.subList(0, k));
    }

    /** @return the sampling key of an id under a seed, as an unsigned 64-bit value (compare with {@link Long#compareUnsigned}) */
    static long key(long seed, String id) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] h = md.digest((seed + ":" + id).getBytes(StandardCharsets.UTF_8));
            // flip the sign bit so signed comparison orders as unsigned
            return ByteBuffer.wrap(h).getLong() ^ Long.MIN_VALUE;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
