package io.flywheel.enrich.model;

import java.nio.FloatBuffer;

import io.flywheel.enrich.RgbImage;

/**
 * How an {@link RgbImage} becomes the model's float32 NCHW input [3,H,W]. Resampling is bilinear
 * with half-pixel centres and edge clamping (the convention of OpenCV's {@code INTER_LINEAR} and
 * TensorFlow's {@code resize_bilinear(half_pixel_centers=True)}), with no antialiasing filter when
 * shrinking.
 */
public enum Preprocessing {
    /**
     * Stretch the whole image to H x W (aspect ratio not kept, as TF.js models such as nsfwjs are
     * fed), then value / 255: range 0..1, no mean/std. What the built-in models expect.
     */
    UNIT(false, new float[] {0f, 0f, 0f}, new float[] {1f, 1f, 1f}),
    /**
     * CLIP (Radford et al., 2021, arXiv:2103.00020): scale so the shorter side fills the input
     * (bilinear here; OpenAI's reference uses bicubic), centre crop to H x W, value / 255, then
     * (x - mean) / std per channel with mean 0.48145466, 0.4578275, 0.40821073 and std 0.26862954,
     * 0.26130258, 0.27577711.
     */
    CLIP(true, new float[] {0.48145466f, 0.4578275f, 0.40821073f}, new float[] {0.26862954f, 0.26130258f, 0.27577711f});

    private final boolean centreCrop;
    private final float[] mean;
    private final float[] std;

    Preprocessing(boolean centreCrop, float[] mean, float[] std) {
        this.centreCrop = centreCrop;
        this.mean = mean;
        this.std = std;
    }

    /** @return the preprocessing named {@code unit} or {@code clip} (any case) */
    public static Preprocessing byName(String name) {
        for (Preprocessing p : values()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown preprocessing '" + name + "': expected unit or clip");
    }

    /**
     * Writes one image as planar float32 [3,H,W] at the buffer's position, advancing it by 3*H*W.
     *
     * @param img the image, any size
     * @param h   model input height
     * @param w   model input width
     * @param out destination with at least 3*H*W floats remaining
     */
    public void fill(RgbImage img, int h, int w, FloatBuffer out) {
        int sw = img.width();
        int sh = img.height();
        // Scale of the resized image relative to the source, and the crop's offset inside it.
        double sx;
        double sy;
        double ox = 0;
        double oy = 0;
        if (centreCrop) {
            double s = Math.max((double) w / sw, (double) h / sh);
            sx = s;
            sy = s;
            ox = (Math.round(sw * s) - w) / 2.0;
            oy = (Math.round(sh * s) - h) / 2.0;
            ox = Math.floor(ox);
            oy = Math.floor(oy);
        } else {
            sx = (double) w / sw;
            sy = (double) h / sh;
        }
        int[] x0 = new int[w];
        int[] x1 = new int[w];
        float[] fx = new float[w];
        for (int x = 0; x < w; x++) {
            double src = (x + ox + 0.5) / sx - 0.5;
            int i = (int) Math.floor(src);
            fx[x] = (float) (src - i);
            x0[x] = clamp(i, sw) * 3;
            x1[x] = clamp(i + 1, sw) * 3;
        }
        byte[] p = img.pixels();
        int plane = h * w;
        int base = out.position();
        float[] row = new float[3 * w];
        float[] scale = new float[3];
        float[] shift = new float[3];
        for (int c = 0; c < 3; c++) {
            scale[c] = 1f / (255f * std[c]);
            shift[c] = mean[c] / std[c];
        }
        for (int y = 0; y < h; y++) {
            double src = (y + oy + 0.5) / sy - 0.5;
            int j = (int) Math.floor(src);
            float fy = (float) (src - j);
            int r0 = clamp(j, sh) * sw * 3;
            int r1 = clamp(j + 1, sh) * sw * 3;
            for (int x = 0; x < w; x++) {
                float ax = fx[x];
                for (int c = 0; c < 3; c++) {
                    float top = (p[r0 + x0[x] + c] & 0xFF) * (1 - ax) + (p[r0 + x1[x] + c] & 0xFF) * ax;
                    float bottom = (p[r1 + x0[x] + c] & 0xFF) * (1 - ax) + (p[r1 + x1[x] + c] & 0xFF) * ax;
                    row[c * w + x] = (top * (1 - fy) + bottom * fy) * scale[c] - shift[c];
                }
            }
            for (int c = 0; c < 3; c++) {
                out.position(base + c * plane + y * w);
                out.put(row, c * w, w);
            }
        }
        out.position(base + 3 * plane);
    }

    private static int clamp(int i, int n) {
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    }
}
