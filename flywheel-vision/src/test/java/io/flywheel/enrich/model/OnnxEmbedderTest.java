package io.flywheel.enrich.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.flywheel.enrich.Embedder;
import io.flywheel.enrich.RgbImage;
import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** OnnxEmbedder on the reference MobileNetV2 model and on real camera images. */
class OnnxEmbedderTest {
    static OnnxEmbedder mobilenet;

    @TempDir
    Path tmp;

    @BeforeAll
    static void open() {
        mobilenet = OnnxEmbedder.open(SharedData.shared("models/mobilenet_v2_block10_gap.onnx"));
    }

    @AfterAll
    static void close() {
        if (mobilenet != null) {
            mobilenet.close();
        }
    }

    @Test
    void readsNamesShapesAndHash() {
        assertEquals("mobilenet_v2_block10_gap", mobilenet.modelId());
        assertEquals("644ae04d2c22f385bb75383204931a6f1e179114b31994052ea0b6ffe8939bf6", mobilenet.sha256());
        assertEquals(96, mobilenet.dimension());
        assertEquals("pixel_values", mobilenet.inputName());
        assertEquals("embedding", mobilenet.outputName());
        assertEquals(224, mobilenet.inputHeight());
        assertEquals(224, mobilenet.inputWidth());
    }

    @Test
    void sameImageSameVectorUnitNorm() throws IOException {
        RgbImage img = TestImages.load("camera/widowx-tictactoe/over_shoulder_cam/move3.jpg");
        float[][] a = mobilenet.embed(List.of(img));
        float[][] b = mobilenet.embed(List.of(img));
        assertArrayEquals(a[0], b[0], "the same image must give the same vector");
        double norm = 0;
        for (float v : a[0]) {
            norm += v * v;
        }
        assertEquals(1.0, Math.sqrt(norm), 1e-5);
        // In a batch with other images the vector stays the same (up to kernel rounding).
        RgbImage other = TestImages.load("camera/xarm-rgbd/resources/color_image.png");
        float[][] batch = mobilenet.embed(List.of(other, img, other));
        assertArrayEquals(a[0], batch[1], 1e-5f);
        assertArrayEquals(batch[0], batch[2], 1e-5f);
    }

    /** Four overlapping 75% crops of a photo are nearer to each other than to any crop of another photo. */
    @Test
    void cropsOfOnePhotoAreNearerThanOtherPhotos() throws IOException {
        String[] photos = {
            "camera/arc2017-rgbd/parallel-jaw-grasping/input-0.color.png",
            "camera/widowx-tictactoe/over_shoulder_cam/move0.jpg",
            "camera/apc2016-rgbd/scene-0000/frame-000004.color.png",
            "camera/xarm-rgbd/resources/color_image.png",
        };
        List<float[][]> crops = new ArrayList<>();
        for (String p : photos) {
            RgbImage img = TestImages.load(p);
            int w = img.width() * 3 / 4;
            int h = img.height() * 3 / 4;
            int dx = img.width() - w;
            int dy = img.height() - h;
            crops.add(mobilenet.embed(List.of(TestImages.crop(img, 0, 0, w, h), TestImages.crop(img, dx, 0, w, h),
                    TestImages.crop(img, 0, dy, w, h), TestImages.crop(img, dx, dy, w, h))));
        }
        for (int p = 0; p < photos.length; p++) {
            double minSame = 2;
            for (int i = 0; i < 4; i++) {
                for (int j = i + 1; j < 4; j++) {
                    minSame = Math.min(minSame, cosine(crops.get(p)[i], crops.get(p)[j]));
                }
            }
            double maxOther = -2;
            for (int q = 0; q < photos.length; q++) {
                if (q != p) {
                    for (float[] a : crops.get(p)) {
                        for (float[] b : crops.get(q)) {
                            maxOther = Math.max(maxOther, cosine(a, b));
                        }
                    }
                }
            }
            System.out.printf("%s: least similar own crops %.3f, most similar other photo %.3f%n", photos[p], minSame, maxOther);
            assertTrue(minSame > maxOther, photos[p] + ": own crops " + minSame + " vs other photos " + maxOther);
        }
    }

    @Test
    void preprocessingUnitAndClipValues() {
        // A 2x1 image, red then blue, stretched to 4x2: bilinear with half-pixel centres.
        RgbImage img = new RgbImage(2, 1, new byte[] {(byte) 255, 0, 0, 0, 0, (byte) 255});
        FloatBuffer buf = FloatBuffer.allocate(3 * 2 * 4);
        Preprocessing.UNIT.fill(img, 2, 4, buf);
        float[] v = buf.array();
        // Red plane, row 0: source x = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 -> 1, 0.75, 0.25, 0.
        assertArrayEquals(new float[] {1f, 0.75f, 0.25f, 0f}, java.util.Arrays.copyOfRange(v, 0, 4), 1e-6f);
        assertArrayEquals(new float[] {0f, 0.25f, 0.75f, 1f}, java.util.Arrays.copyOfRange(v, 16, 20), 1e-6f);
        // CLIP: a uniform grey 128 image becomes (128/255 - mean) / std in every channel, cropped to 2x2.
        byte[] grey = new byte[6 * 4 * 3];
        java.util.Arrays.fill(grey, (byte) 128);
        FloatBuffer c = FloatBuffer.allocate(3 * 2 * 2);
        Preprocessing.CLIP.fill(new RgbImage(6, 4, grey), 2, 2, c);
        assertEquals((128 / 255f - 0.48145466f) / 0.26862954f, c.get(0), 1e-5);
        assertEquals((128 / 255f - 0.40821073f) / 0.27577711f, c.get(11), 1e-5);
    }

    @Test
    void missingAndInvalidFilesGiveClearErrors() throws IOException {
        Path missing = tmp.resolve("nope.onnx");
        Embedder.EmbeddingException e1 = assertThrows(Embedder.EmbeddingException.class, () -> OnnxEmbedder.open(missing));
        assertEquals("model file " + missing + " does not exist", e1.getMessage());

        Path garbage = tmp.resolve("garbage.onnx");
        Files.writeString(garbage, "this is not a protobuf model");
        Embedder.EmbeddingException e2 = assertThrows(Embedder.EmbeddingException.class, () -> OnnxEmbedder.open(garbage));
        assertTrue(e2.getMessage().startsWith("model file " + garbage + " (28 bytes) is not a valid ONNX model"),
                e2.getMessage());

        // A valid model whose input is a vector [N,10], not an image.
        OnnxGraph g = new OnnxGraph("vector");
        g.input("x", "N", 10);
        g.node("Relu", "relu", List.of("x"), "y");
        g.output("y", "N", 10);
        Path vector = tmp.resolve("vector.onnx");
        Files.write(vector, g.toModelBytes(13, "test", "0", "", Map.of()));
        Embedder.EmbeddingException e3 = assertThrows(Embedder.EmbeddingException.class, () -> OnnxEmbedder.open(vector));
        assertEquals("model file " + vector + ": input 'x' has rank 2 [-1, 10], expected rank 4 [N,3,H,W] (NCHW)",
                e3.getMessage());
    }

    /** A one-node graph written by OnnxGraph runs in ONNX Runtime with the expected values. */
    @Test
    void onnxGraphWriterRoundTrip() throws Exception {
        OnnxGraph g = new OnnxGraph("pool");
        g.input("pixel_values", "N", 3, 2, 2);
        g.node("GlobalAveragePool", "gap", List.of("pixel_values"), "pooled");
        g.node("Flatten", "flatten", List.of("pooled"), "embedding").attr("axis", 1L);
        g.output("embedding", "N", 3);
        Path f = tmp.resolve("pool.onnx");
        Files.write(f, g.toModelBytes(13, "test", "0", "", Map.of("flywheel.model_id", "pool")));
        // 2x2 image: mean per channel (R 0.5, G 0.25, B 0) -> normalised (0.894, 0.447, 0).
        RgbImage img = new RgbImage(2, 2, new byte[] {(byte) 255, (byte) 255, 0, 0, 0, 0, (byte) 255, 0, 0, 0, 0, 0});
        try (OnnxEmbedder e = OnnxEmbedder.builder(f).build()) {
            assertEquals(3, e.dimension());
            assertEquals("pool", e.metadata().get("flywheel.model_id"));
            float[] v = e.embed(List.of(img))[0];
            assertArrayEquals(new float[] {(float) (2 / Math.sqrt(5)), (float) (1 / Math.sqrt(5)), 0f}, v, 1e-6f);
        }
    }

    static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            na += a[i] * a[i];
            nb += b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }
}
