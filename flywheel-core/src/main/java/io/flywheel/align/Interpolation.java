package io.flywheel.align;

/**
 * Vector interpolation between two messages: linear per component, spherical linear (slerp) for quaternion groups.
 *
 * <p>Slerp follows K. Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985: both quaternions are
 * normalised, the second is negated when their dot product is negative (shortest arc; q and -q are the same
 * rotation), and {@code slerp(q0, q1, w) = sin((1-w)θ)/sin θ · q0 + sin(wθ)/sin θ · q1} with {@code cos θ = q0·q1};
 * when θ is tiny (dot &gt; 0.9995) a normalised linear blend is used instead. The result has unit norm.
 */
public final class Interpolation {
    private Interpolation() {
    }

    /**
     * Fills {@code out[f*dim ..]} for every frame from the neighbours {@code lower[f]}, {@code upper[f]} and the weight
     * {@code w[f]} of the upper one; NaN where {@code lower[f] < 0}.
     */
    static void fill(double[] values, int dim, int[] quats, int[] lower, int[] upper, double[] w, double[] out) {
        for (int f = 0; f < lower.length; f++) {
            int o = f * dim;
            int lo = lower[f];
            if (lo < 0) {
                java.util.Arrays.fill(out, o, o + dim, Double.NaN);
                continue;
            }
            int a = lo * dim;
            int hi = upper[f];
            double wf = w[f];
            if (hi == lo || wf == 0.0) {
                System.arraycopy(values, a, out, o, dim);
                continue;
            }
            int b = hi * dim;
            double wl = 1.0 - wf;
            for (int c = 0; c < dim; c++) out[o + c] = wl * values[a + c] + wf * values[b + c];
            for (int q : quats) slerp(values, a + q, values, b + q, wf, out, o + q);
        }
    }

    /**
     * Spherical linear interpolation of quaternions (x, y, z, w) stored at {@code a[ao..ao+3]} and
     * {@code b[bo..bo+3]} with weight {@code t} of {@code b}; writes a unit quaternion to {@code out[oo..oo+3]}.
     * A zero quaternion on either side gives NaN.
     */
    public static void slerp(double[] a, int ao, double[] b, int bo, double t, double[] out, int oo) {
        double ax = a[ao], ay = a[ao + 1], az = a[ao + 2], aw = a[ao + 3];
        double bx = b[bo], by = b[bo + 1], bz = b[bo + 2], bw = b[bo + 3];
        double na = Math.sqrt(ax * ax + ay * ay + az * az + aw * aw);
        double nb = Math.sqrt(bx * bx + by * by + bz * bz + bw * bw);
        if (na == 0 || nb == 0) {
            out[oo] = out[oo + 1] = out[oo + 2] = out[oo + 3] = Double.NaN;
            return;
        }
        ax /= na; ay /= na; az /= na; aw /= na;
        bx /= nb; by /= nb; bz /= nb; bw /= nb;
        double dot = ax * bx + ay * by + az * bz + aw * bw;
        if (dot < 0) {
            bx = -bx; by = -by; bz = -bz; bw = -bw;
            dot = -dot;
        }
        double s0;
        double s1;
        if (dot > 0.9995) {
            s0 = 1 - t;
            s1 = t;
        } else {
            double theta = Math.acos(Math.min(1.0, dot));
            double sin = Math.sin(theta);
            s0 = Math.sin((1 - t) * theta) / sin;
            s1 = Math.sin(t * theta) / sin;
        }
        double x = s0 * ax + s1 * bx, y = s0 * ay + s1 * by, z = s0 * az + s1 * bz, w = s0 * aw + s1 * bw;
        double n = Math.sqrt(x * x + y * y + z * z + w * w);
        out[oo] = x / n;
        out[oo + 1] = y / n;
        out[oo + 2] = z / n;
        out[oo + 3] = w / n;
    }
}
