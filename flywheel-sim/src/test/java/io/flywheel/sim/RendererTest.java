package io.flywheel.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The renderer's fast paths (word-wise sensor noise, running-sum blur, cached static background)
 * against straightforward per-pixel reference implementations.
 */
class RendererTest {
    private static final int W = 64;
    private static final int H = 24;

    /** Random image with many pixels at and near 0 and 255, so saturation is exercised. */
    private static byte[] image(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        byte[] b = new byte[W * H * 3];
        for (int i = 0; i < b.length; i++) {
            int kind = r.nextInt(4);
            b[i] = (byte) (kind == 0 ? r.nextInt(6) : kind == 1 ? 250 + r.nextInt(6) : r.nextInt(256));
        }
        return b;
    }

    /** Per-byte reference: uniform table, xorshift32 row offsets, clamp to 0..255. */
    private static void referenceNoise(byte[] img, double sigma, long seed) {
        int table = 1 << 16;
        int a = Math.max(1, (int) Math.round(sigma * Math.sqrt(3)));
        SplittableRandom t = new SplittableRandom(Double.doubleToLongBits(sigma));
        int[] noise = new int[table + W];
        for (int i = 0; i < noise.length; i++) {
            noise[i] = t.nextInt(-a, a + 1);
        }
        int x = (int) (seed ^ (seed >>> 32)) | 1;
        for (int y = 0; y < H; y++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            int off = (x >>> 1) % table;
            for (int px = 0; px < W; px++) {
                for (int ch = 0; ch < 3; ch++) {
                    int i = (y * W + px) * 3 + ch;
                    img[i] = (byte) Math.max(0, Math.min(255, (img[i] & 0xFF) + noise[off + px]));
                }
            }
        }
    }

    @Test
    void noiseMatchesPerByteReferenceIncludingSaturation() {
        Renderer r = new Renderer(W, H);
        for (double sigma : new double[] {2.0, 5.0, 60.0}) {
            for (long seed : new long[] {1, 42, -7_000_000_000L}) {
                byte[] in = image(seed * 31 + (long) sigma);
                System.arraycopy(in, 0, r.bgr, 0, in.length);
                r.noise(sigma, seed);
                byte[] want = in.clone();
                referenceNoise(want, sigma, seed);
                assertArrayEquals(want, r.bgr, "sigma " + sigma + " seed " + seed);
                assertFalse(Arrays.equals(in, r.bgr), "noise changed nothing");
            }
        }
    }

    @Test
    void blurMatchesNaiveBoxMean() {
        Renderer r = new Renderer(W, H);
        for (int radius : new int[] {1, 2, 8, 40}) {
            byte[] in = image(radius);
            System.arraycopy(in, 0, r.bgr, 0, in.length);
            r.blur(radius);
            byte[] want = new byte[in.length];
            for (int y = 0; y < H; y++) {
                for (int x = 0; x < W; x++) {
                    for (int ch = 0; ch < 3; ch++) {
                        int sum = 0;
                        for (int d = -radius; d <= radius; d++) {
                            int xx = Math.max(0, Math.min(W - 1, x + d));
                            sum += in[(y * W + xx) * 3 + ch] & 0xFF;
                        }
                        want[(y * W + x) * 3 + ch] = (byte) (sum / (2 * radius + 1));
                    }
                }
            }
            assertArrayEquals(want, r.bgr, "radius " + radius);
        }
    }

    private static Renderer.State state() {
        Renderer.State s = new Renderer.State();
        s.scene = Catalog.SCENES.get(0);
        s.lighting = Catalog.LIGHTINGS.get(1);
        s.object = Catalog.GLASS_CUP;
        s.markers = new double[][] {{0.5, 0.1, 0.05, 200, 30, 30}, {0.3, -0.3, 0.08, 20, 200, 40}};
        s.bin[0] = 0.6;
        s.bin[1] = 0.3;
        s.objectPos[0] = 0.45;
        s.objectPos[2] = 0.05;
        s.leftEe[0] = 0.4;
        s.leftEe[1] = 0.2;
        s.leftEe[2] = 0.2;
        s.rightEe[0] = 0.5;
        s.rightEe[1] = -0.2;
        s.rightEe[2] = 0.25;
        s.leftGripper = Demonstration.GRIPPER_OPEN;
        s.rightGripper = Demonstration.GRIPPER_OPEN;
        return s;
    }

    private static byte[] fresh(Renderer.State s, double[] pos, int ownArm) {
        Renderer r = new Renderer(W * 2, H * 2);
        r.camera(pos, new double[] {0.7, 0, -0.85}, new double[] {0, 0, 1});
        r.draw(s, ownArm);
        return r.bgr.clone();
    }

    @Test
    void cachedBackgroundDrawsTheSameAsAFreshRenderer() {
        Renderer.State s = state();
        double[] head = {-0.15, 0, 0.85};
        double[] moved = {-0.1, 0.05, 0.8};
        Renderer r = new Renderer(W * 2, H * 2);
        r.camera(head, new double[] {0.7, 0, -0.85}, new double[] {0, 0, 1});
        for (int i = 0; i < 4; i++) { // miss, store, then hits
            s.objectPos[1] = 0.02 * i; // the object moves; the background does not
            r.draw(s, 0);
            assertArrayEquals(fresh(s, head, 0), r.bgr, "frame " + i);
        }
        // a new pose, a new bin position and a new lighting each invalidate the cache
        r.camera(moved, new double[] {0.7, 0, -0.85}, new double[] {0, 0, 1});
        r.draw(s, 0);
        assertArrayEquals(fresh(s, moved, 0), r.bgr);
        r.draw(s, 0);
        s.bin[0] = 0.7;
        r.draw(s, 0);
        assertArrayEquals(fresh(s, moved, 0), r.bgr);
        byte[] before = r.bgr.clone();
        s.lighting = Catalog.LIGHTINGS.get(3);
        r.draw(s, 0);
        assertArrayEquals(fresh(s, moved, 0), r.bgr);
        assertTrue(!Arrays.equals(before, r.bgr), "lighting change not drawn");
    }
}
