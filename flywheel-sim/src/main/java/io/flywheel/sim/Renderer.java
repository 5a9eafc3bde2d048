package io.flywheel.sim;

import java.util.Arrays;

/**
 * A small software rasterizer for the simulated cameras. It draws the scene model (wall, floor,
 * table, markers on the table, the bin, the object, both arms and grippers) through a pinhole
 * camera into a packed BGR raster (3 bytes per pixel, row-major, {@code width*height*3} bytes,
 * the layout OpenCV and {@code BufferedImage.TYPE_3BYTE_BGR} use), then applies lighting, optional
 * horizontal motion blur and sensor noise.
 *
 * <p>Painter's algorithm (far to near); polygons are clipped against the near plane; objects are
 * screen-space ellipses and boxes sized by depth. Transparent objects are alpha-blended at 25%
 * with darker rims; transparent and reflective ones get a specular glint. Not thread-safe: one
 * renderer per worker thread.
 */
final class Renderer {
    final int width;
    final int height;
    final byte[] bgr;
    private final int[] row;
    private final double focal;
    // camera basis
    private final double[] c = new double[3];
    private final double[] f = new double[3];
    private final double[] r = new double[3];
    private final double[] u = new double[3];
    private double gain;
    private double[] cast;

    Renderer(int width, int height) {
        this.width = width;
        this.height = height;
        this.bgr = new byte[width * height * 3];
        this.row = new int[width * 3];
        this.focal = 0.85 * width;
        this.noiseUp = new byte[3 * (NOISE_TABLE + width)];
        this.noiseDown = new byte[3 * (NOISE_TABLE + width)];
    }

    /** What the scene looks like at one instant. */
    static final class State {
        Catalog.Scene scene;
        Catalog.Lighting lighting;
        Catalog.ObjectKind object;
        final double[] objectPos = new double[3];
        final double[] bin = new double[3];
        final double[] leftEe = new double[3];
        final double[] rightEe = new double[3];
        double leftGripper;
        double rightGripper;
        /** table markers: {x, y, size, r, g, b} */
        double[][] markers;
    }

    /** Places the camera at {@code pos} looking along {@code forward}; {@code upHint} fixes the roll. */
    void camera(double[] pos, double[] forward, double[] upHint) {
        System.arraycopy(pos, 0, c, 0, 3);
        System.arraycopy(forward, 0, f, 0, 3);
        norm(f);
        cross(f, upHint, r);
        norm(r);
        cross(r, f, u);
    }

    private static void cross(double[] a, double[] b, double[] o) {
        double x = a[1] * b[2] - a[2] * b[1];
        double y = a[2] * b[0] - a[0] * b[2];
        double z = a[0] * b[1] - a[1] * b[0];
        o[0] = x;
        o[1] = y;
        o[2] = z;
    }

    private static void norm(double[] a) {
        double n = Math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        a[0] /= n;
        a[1] /= n;
        a[2] /= n;
    }

    /** Camera-space coordinates {right, up, depth} of a world point. */
    private void toCam(double x, double y, double z, double[] o) {
        double dx = x - c[0];
        double dy = y - c[1];
        double dz = z - c[2];
        o[0] = dx * r[0] + dy * r[1] + dz * r[2];
        o[1] = dx * u[0] + dy * u[1] + dz * u[2];
        o[2] = dx * f[0] + dy * f[1] + dz * f[2];
    }

    private static final double NEAR = 0.03;

    /** Fills a planar world polygon (vertices xyz triples), clipped at the near plane. */
    private void worldPolygon(double[][] pts, int[] rgb, double alpha) {
        double[][] cam = new double[pts.length][3];
        for (int i = 0; i < pts.length; i++) {
            toCam(pts[i][0], pts[i][1], pts[i][2], cam[i]);
        }
        double[] xs = new double[pts.length * 2];
        double[] ys = new double[pts.length * 2];
        int n = 0;
        for (int i = 0; i < cam.length; i++) {
            double[] a = cam[i];
            double[] b = cam[(i + 1) % cam.length];
            boolean ain = a[2] >= NEAR;
            boolean bin = b[2] >= NEAR;
            if (ain) {
                xs[n] = width / 2.0 + focal * a[0] / a[2];
                ys[n] = height / 2.0 - focal * a[1] / a[2];
                n++;
            }
            if (ain != bin) {
                double t = (NEAR - a[2]) / (b[2] - a[2]);
                double px = a[0] + t * (b[0] - a[0]);
                double py = a[1] + t * (b[1] - a[1]);
                xs[n] = width / 2.0 + focal * px / NEAR;
                ys[n] = height / 2.0 - focal * py / NEAR;
                n++;
            }
        }
        if (n >= 3) {
            fillPolygon(xs, ys, n, lit(rgb), alpha);
        }
    }

    private int[] lit(int[] rgb) {
        int[] o = new int[3];
        for (int k = 0; k < 3; k++) {
            o[k] = clamp((int) Math.round(rgb[k] * gain * cast[k]));
        }
        return o;
    }

    private static int clamp(int v) {
        return v < 0 ? 0 : Math.min(255, v);
    }

    /** Scanline fill of a convex (or simple) polygon in pixel coordinates. */
    private void fillPolygon(double[] xs, double[] ys, int n, int[] rgb, double alpha) {
        double minY = Double.MAX_VALUE;
        double maxY = -Double.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            minY = Math.min(minY, ys[i]);
            maxY = Math.max(maxY, ys[i]);
        }
        int y0 = Math.max(0, (int) Math.ceil(minY - 0.5));
        int y1 = Math.min(height - 1, (int) Math.floor(maxY - 0.5));
        for (int y = y0; y <= y1; y++) {
            double sy = y + 0.5;
            double lo = Double.MAX_VALUE;
            double hi = -Double.MAX_VALUE;
            for (int i = 0; i < n; i++) {
                double ax = xs[i];
                double ay = ys[i];
                double bx = xs[(i + 1) % n];
                double by = ys[(i + 1) % n];
                if ((ay <= sy && by > sy) || (by <= sy && ay > sy)) {
                    double x = ax + (sy - ay) / (by - ay) * (bx - ax);
                    lo = Math.min(lo, x);
                    hi = Math.max(hi, x);
                }
            }
            if (lo <= hi) {
                span(y, (int) Math.max(0, Math.ceil(lo - 0.5)), (int) Math.min(width - 1, Math.floor(hi - 0.5)), rgb, alpha);
            }
        }
    }

    private void span(int y, int x0, int x1, int[] rgb, double alpha) {
        if (x1 < x0) {
            return;
        }
        int p = (y * width + x0) * 3;
        byte b = (byte) rgb[2];
        byte g = (byte) rgb[1];
        byte rr = (byte) rgb[0];
        if (alpha >= 1) {
            // first pixel, then doubling copies
            int end = p + (x1 - x0 + 1) * 3;
            bgr[p] = b;
            bgr[p + 1] = g;
            bgr[p + 2] = rr;
            int filled = 3;
            while (p + filled < end) {
                int len = Math.min(filled, end - p - filled);
                System.arraycopy(bgr, p, bgr, p + filled, len);
                filled += len;
            }
        } else {
            int a = (int) (alpha * 256);
            int ia = 256 - a;
            for (int x = x0; x <= x1; x++) {
                bgr[p] = (byte) (((bgr[p] & 0xFF) * ia + rgb[2] * a) >> 8);
                bgr[p + 1] = (byte) (((bgr[p + 1] & 0xFF) * ia + rgb[1] * a) >> 8);
                bgr[p + 2] = (byte) (((bgr[p + 2] & 0xFF) * ia + rgb[0] * a) >> 8);
                p += 3;
            }
        }
    }

    /** Filled ellipse in pixel coordinates with a vertical shading ramp (top brighter). */
    private void ellipse(double cx, double cy, double rx, double ry, int[] rgb, double alpha, double shade) {
        if (rx < 0.3 || ry < 0.3) {
            return;
        }
        int y0 = Math.max(0, (int) Math.floor(cy - ry));
        int y1 = Math.min(height - 1, (int) Math.ceil(cy + ry));
        int[] col = new int[3];
        for (int y = y0; y <= y1; y++) {
            double dy = (y + 0.5 - cy) / ry;
            if (dy * dy > 1) {
                continue;
            }
            double half = rx * Math.sqrt(1 - dy * dy);
            double k = 1 + shade * (-dy);
            for (int i = 0; i < 3; i++) {
                col[i] = clamp((int) (rgb[i] * k));
            }
            span(y, Math.max(0, (int) Math.ceil(cx - half - 0.5)), Math.min(width - 1, (int) Math.floor(cx + half - 0.5)), col, alpha);
        }
    }

    private void rect(double x0, double y0, double x1, double y1, int[] rgb, double alpha) {
        int ya = Math.max(0, (int) Math.ceil(y0 - 0.5));
        int yb = Math.min(height - 1, (int) Math.floor(y1 - 0.5));
        int xa = Math.max(0, (int) Math.ceil(x0 - 0.5));
        int xb = Math.min(width - 1, (int) Math.floor(x1 - 0.5));
        for (int y = ya; y <= yb; y++) {
            span(y, xa, xb, rgb, alpha);
        }
    }

    /** A thick segment between two world points, as a quad in screen space. */
    private void limb(double[] a, double[] b, double radius, int[] rgb) {
        double[] ca = new double[3];
        double[] cb = new double[3];
        toCam(a[0], a[1], a[2], ca);
        toCam(b[0], b[1], b[2], cb);
        if (ca[2] < NEAR || cb[2] < NEAR) {
            return;
        }
        double ax = width / 2.0 + focal * ca[0] / ca[2];
        double ay = height / 2.0 - focal * ca[1] / ca[2];
        double bx = width / 2.0 + focal * cb[0] / cb[2];
        double by = height / 2.0 - focal * cb[1] / cb[2];
        double wa = focal * radius / ca[2];
        double wb = focal * radius / cb[2];
        double dx = bx - ax;
        double dy = by - ay;
        double len = Math.hypot(dx, dy);
        if (len < 1e-6) {
            return;
        }
        double nx = -dy / len;
        double ny = dx / len;
        double[] xs = {ax + nx * wa, bx + nx * wb, bx - nx * wb, ax - nx * wa};
        double[] ys = {ay + ny * wa, by + ny * wb, by - ny * wb, ay - ny * wa};
        fillPolygon(xs, ys, 4, lit(rgb), 1);
    }

    private static final int[] ARM = {70, 72, 78};
    private static final int[] FINGER = {40, 40, 44};
    private static final int[] GLINT = {255, 255, 255};

    /**
     * Draws the scene from the current camera.
     *
     * @param s scene state
     * @param ownArm 0 none, 1 left, 2 right: the arm this (wrist) camera is mounted on; its
     *     fingers are drawn as an overlay at the bottom of the image instead of in 3D
     */
    void draw(State s, int ownArm) {
        gain = s.lighting.gain();
        cast = s.lighting.cast();
        drawBackground(s, ownArm);

        // object and arms, far to near
        double[] tmp = new double[3];
        toCam(s.objectPos[0], s.objectPos[1], s.objectPos[2], tmp);
        double objDepth = tmp[2];
        toCam(s.leftEe[0], s.leftEe[1], s.leftEe[2], tmp);
        double leftDepth = ownArm == 1 ? -1 : tmp[2];
        toCam(s.rightEe[0], s.rightEe[1], s.rightEe[2], tmp);
        double rightDepth = ownArm == 2 ? -1 : tmp[2];
        double[] depth = {objDepth, leftDepth, rightDepth};
        Integer[] order = {0, 1, 2};
        Arrays.sort(order, (p, q) -> Double.compare(depth[q], depth[p]));
        for (int k : order) {
            if (depth[k] < NEAR) {
                continue;
            }
            if (k == 0) {
                drawObject(s);
            } else {
                drawArm(k == 1, k == 1 ? s.leftEe : s.rightEe, k == 1 ? s.leftGripper : s.rightGripper);
            }
        }
        if (ownArm != 0) {
            double g = ownArm == 1 ? s.leftGripper : s.rightGripper;
            double sep = (0.12 + 0.3 * g / Demonstration.GRIPPER_OPEN) * width;
            int[] fc = lit(FINGER);
            double fw = 0.07 * width;
            rect(width / 2.0 - sep / 2 - fw, height * 0.72, width / 2.0 - sep / 2, height, fc, 1);
            rect(width / 2.0 + sep / 2, height * 0.72, width / 2.0 + sep / 2 + fw, height, fc, 1);
        }
    }

    /**
     * The static part of the scene (wall, floor, table, markers, bin). It depends only on the
     * camera pose, the scene, the lighting, the markers and the bin position, so a camera whose pose
     * repeats (the head camera always, wrist cameras while the arm rests) copies its last background
     * instead of drawing it again: one cached background per camera ({@code ownArm}), stored the
     * second time in a row the same key is seen. The result is byte-identical to drawing.
     */
    private void drawBackground(State s, int ownArm) {
        double[] key = bgScratch;
        System.arraycopy(c, 0, key, 0, 3);
        System.arraycopy(f, 0, key, 3, 3);
        System.arraycopy(u, 0, key, 6, 3);
        System.arraycopy(s.bin, 0, key, 9, 3);
        int slot = Math.max(0, Math.min(2, ownArm));
        boolean same = bgScene[slot] == s.scene && bgLighting[slot] == s.lighting && bgMarkers[slot] == s.markers
                && Arrays.equals(bgKey[slot], key);
        if (same && bgPixels[slot] != null) {
            System.arraycopy(bgPixels[slot], 0, bgr, 0, bgr.length);
            return;
        }
        // wall
        int[] wall = lit(s.scene.wall());
        rect(0, 0, width, height, wall, 1);
        // floor, table top and front face
        worldPolygon(new double[][] {{-3, -4, -0.75}, {6, -4, -0.75}, {6, 4, -0.75}, {-3, 4, -0.75}}, s.scene.floor(), 1);
        int[] front = new int[3];
        for (int k = 0; k < 3; k++) {
            front[k] = (int) (s.scene.table()[k] * 0.7);
        }
        worldPolygon(new double[][] {{0.1, -0.7, 0}, {0.1, 0.7, 0}, {0.1, 0.7, -0.75}, {0.1, -0.7, -0.75}}, front, 1);
        worldPolygon(new double[][] {{0.1, -0.7, 0}, {0.95, -0.7, 0}, {0.95, 0.7, 0}, {0.1, 0.7, 0}}, s.scene.table(), 1);
        for (double[] m : s.markers) {
            double h = m[2] / 2;
            worldPolygon(new double[][] {{m[0] - h, m[1] - h, 0}, {m[0] + h, m[1] - h, 0}, {m[0] + h, m[1] + h, 0},
                    {m[0] - h, m[1] + h, 0}}, new int[] {(int) m[3], (int) m[4], (int) m[5]}, 1);
        }
        // bin: rim and dark inside
        double[] b = s.bin;
        worldPolygon(new double[][] {{b[0] - 0.1, b[1] - 0.08, 0.001}, {b[0] + 0.1, b[1] - 0.08, 0.001},
                {b[0] + 0.1, b[1] + 0.08, 0.001}, {b[0] - 0.1, b[1] + 0.08, 0.001}}, s.scene.bin(), 1);
        int[] inside = {s.scene.bin()[0] / 3, s.scene.bin()[1] / 3, s.scene.bin()[2] / 3};
        worldPolygon(new double[][] {{b[0] - 0.085, b[1] - 0.065, 0.002}, {b[0] + 0.085, b[1] - 0.065, 0.002},
                {b[0] + 0.085, b[1] + 0.065, 0.002}, {b[0] - 0.085, b[1] + 0.065, 0.002}}, inside, 1);

        if (same) {
            bgPixels[slot] = bgr.clone();
        } else {
            bgPixels[slot] = null;
            bgScene[slot] = s.scene;
            bgLighting[slot] = s.lighting;
            bgMarkers[slot] = s.markers;
            System.arraycopy(key, 0, bgKey[slot], 0, key.length);
        }
    }

    private final double[] bgScratch = new double[12];
    private final double[][] bgKey = new double[3][12];
    private final Catalog.Scene[] bgScene = new Catalog.Scene[3];
    private final Catalog.Lighting[] bgLighting = new Catalog.Lighting[3];
    private final double[][][] bgMarkers = new double[3][][];
    private final byte[][] bgPixels = new byte[3][];

    private void drawArm(boolean left, double[] ee, double opening) {
        double[] shoulder = {0.0, left ? 0.22 : -0.22, 0.25};
        double[] elbow = {ee[0] * 0.45, (shoulder[1] + ee[1]) / 2, Math.max(ee[2], 0.2) + 0.22};
        double[] wrist = {ee[0], ee[1], ee[2] + 0.12};
        limb(shoulder, elbow, 0.04, ARM);
        limb(elbow, wrist, 0.032, ARM);
        double half = opening / 2 + 0.008;
        limb(new double[] {ee[0], ee[1] - half, ee[2] + 0.06}, new double[] {ee[0], ee[1] + half, ee[2] + 0.06}, 0.012, FINGER);
        limb(new double[] {ee[0], ee[1] - half, ee[2] + 0.06}, new double[] {ee[0], ee[1] - half, ee[2] - 0.02}, 0.008, FINGER);
        limb(new double[] {ee[0], ee[1] + half, ee[2] + 0.06}, new double[] {ee[0], ee[1] + half, ee[2] - 0.02}, 0.008, FINGER);
    }

    private void drawObject(State s) {
        Catalog.ObjectKind k = s.object;
        double[] p = s.objectPos;
        double[] cc = new double[3];
        toCam(p[0], p[1], p[2], cc);
        if (cc[2] < NEAR) {
            return;
        }
        double cx = width / 2.0 + focal * cc[0] / cc[2];
        double cy = height / 2.0 - focal * cc[1] / cc[2];
        double rx = focal * k.width() / 2 / cc[2];
        double ry = focal * k.height() / 2 / cc[2];
        int[] col = lit(k.color());
        double alpha = k.transparent() ? 0.25 : 1;
        switch (k.shape()) {
            case "sphere" -> ellipse(cx, cy, rx, rx, col, alpha, 0.35);
            case "box" -> {
                rect(cx - rx, cy - ry, cx + rx, cy + ry, col, alpha);
                int[] top = {clamp(col[0] + 30), clamp(col[1] + 30), clamp(col[2] + 30)};
                rect(cx - rx, cy - ry, cx + rx, cy - ry * 0.7, top, alpha);
            }
            default -> {
                rect(cx - rx, cy - ry * 0.8, cx + rx, cy + ry * 0.8, col, alpha);
                ellipse(cx, cy + ry * 0.8, rx, ry * 0.2 + 0.5, col, alpha, 0.2);
                int[] rim = k.transparent() ? new int[] {col[0] / 2, col[1] / 2, col[2] / 2}
                        : new int[] {clamp(col[0] - 40), clamp(col[1] - 40), clamp(col[2] - 40)};
                ellipse(cx, cy - ry * 0.8, rx, ry * 0.2 + 0.5, rim, k.transparent() ? 0.5 : 1, 0);
                if (k.transparent()) {
                    rect(cx - rx, cy - ry * 0.8, cx - rx * 0.85, cy + ry * 0.8, rim, 0.5);
                    rect(cx + rx * 0.85, cy - ry * 0.8, cx + rx, cy + ry * 0.8, rim, 0.5);
                }
            }
        }
        if (k.reflective()) {
            ellipse(cx - rx * 0.45, cy - ry * 0.3, Math.max(0.8, rx * 0.12), Math.max(1, ry * 0.35), GLINT, 0.9, 0);
        }
    }

    /**
     * Horizontal box blur of radius {@code radius} pixels (motion blur along the image x axis):
     * every channel becomes the floor of the mean of the {@code 2*radius+1} samples around it,
     * with the edge pixels repeated past the image border. Running sums per channel; the division
     * is an exact multiply by a 32-bit reciprocal (sums stay below 2^16).
     */
    void blur(int radius) {
        int n = 2 * radius + 1;
        long inv = ((1L << 32) + n - 1) / n; // ceil(2^32 / n): exact floor(sum / n) for sum, n < 2^16
        int w = width;
        int rowBytes = w * 3;
        int[] rw = row;
        for (int y = 0; y < height; y++) {
            int base = y * rowBytes;
            for (int i = 0; i < rowBytes; i++) {
                rw[i] = bgr[base + i] & 0xFF;
            }
            int s0 = 0;
            int s1 = 0;
            int s2 = 0;
            for (int x = -radius; x <= radius; x++) {
                int q = Math.max(0, Math.min(w - 1, x)) * 3;
                s0 += rw[q];
                s1 += rw[q + 1];
                s2 += rw[q + 2];
            }
            int last = (w - 1) * 3;
            for (int x = 0; x < w; x++) {
                int o = base + x * 3;
                bgr[o] = (byte) ((s0 * inv) >>> 32);
                bgr[o + 1] = (byte) ((s1 * inv) >>> 32);
                bgr[o + 2] = (byte) ((s2 * inv) >>> 32);
                int add = x + radius + 1;
                int sub = x - radius;
                int pa = add < w ? add * 3 : last;
                int ps = sub > 0 ? sub * 3 : 0;
                s0 += rw[pa] - rw[ps];
                s1 += rw[pa + 1] - rw[ps + 1];
                s2 += rw[pa + 2] - rw[ps + 2];
            }
        }
    }

    private static final int NOISE_TABLE = 1 << 16;
    /**
     * Noise values repeated for the three channels of a pixel, split into the positive part
     * ({@code noiseUp}) and the magnitude of the negative part ({@code noiseDown}): 3 * (NOISE_TABLE + width)
     * bytes each, at most one of the two nonzero at any index.
     */
    private final byte[] noiseUp;
    private final byte[] noiseDown;
    private double noiseSigma = -1;

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final long HI = 0x8080808080808080L;
    private static final long LO = 0x7F7F7F7F7F7F7F7FL;

    /**
     * Adds zero-mean sensor noise (the same value on the three channels of a pixel, like luma noise): a table of uniform values in [-a, a] (a = sigma * sqrt(3))
     * drawn once per sigma, read from a different pseudo-random offset in every image row (offsets
     * from an xorshift32 stream seeded by {@code seed}, different for every frame), so two frames
     * of the same scene are near but never identical. Values saturate at 0 and 255. Eight bytes
     * at a time: a saturating unsigned add of the positive part, then a saturating subtract of
     * the negative part, in 64-bit words (SWAR); a is capped at 127.
     */
    void noise(double sigma, long seed) {
        byte[] up = noiseUp;
        byte[] down = noiseDown;
        if (sigma != noiseSigma) {
            noiseSigma = sigma;
            int a = Math.max(1, Math.min(127, (int) Math.round(sigma * Math.sqrt(3)))); // byte-sized parts
            java.util.SplittableRandom t = new java.util.SplittableRandom(Double.doubleToLongBits(sigma));
            for (int i = 0; i < up.length; i += 3) {
                int v = t.nextInt(-a, a + 1);
                byte u = (byte) Math.max(0, v);
                byte d = (byte) Math.max(0, -v);
                up[i] = u;
                up[i + 1] = u;
                up[i + 2] = u;
                down[i] = d;
                down[i + 1] = d;
                down[i + 2] = d;
            }
        }
        int x = (int) (seed ^ (seed >>> 32)) | 1;
        int rowBytes = width * 3;
        int words = rowBytes & ~7;
        byte[] img = bgr;
        for (int y = 0; y < height; y++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            int off = ((x >>> 1) % NOISE_TABLE) * 3;
            int base = y * rowBytes;
            int i = 0;
            for (; i < words; i += 8) {
                long v = (long) LONGS.get(img, base + i);
                long p = (long) LONGS.get(up, off + i);
                long m = (long) LONGS.get(down, off + i);
                // v + p, saturating at 0xFF per byte (p < 0x80, so no carry crosses a byte)
                long s = (v & LO) + p;
                long carry = v & s & HI;
                v = (s ^ (v & HI)) | ((carry >>> 7) * 0xFF);
                // v - m, saturating at 0 per byte (m < 0x80, so no borrow crosses a byte)
                long d = (v | HI) - m;
                long borrow = ~(v | d) & HI;
                v = (d ^ (~v & HI)) & ~((borrow >>> 7) * 0xFF);
                LONGS.set(img, base + i, v);
            }
            for (; i < rowBytes; i++) {
                int v = (img[base + i] & 0xFF) + up[off + i] - down[off + i];
                img[base + i] = (byte) Math.max(0, Math.min(255, v));
            }
        }
    }
}
