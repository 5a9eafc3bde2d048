package io.flywheel.enrich.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import io.flywheel.enrich.RgbImage;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MAC model ({@link BuiltinModel#MOBILENET_V2_BLOCK10_MAC}: MobileNetV2 cut at
 * {@code block_10_expand_relu} + global max pool) on real camera images, checked against the same
 * network converted without pooling: every embedding value is the maximum of its channel over the
 * 14 x 14 feature map.
 */
class MacModelTest {
    static final BuiltinModel MAC = BuiltinModel.MOBILENET_V2_BLOCK10_MAC;

    @TempDir
    static Path tmp;

    static NsfwjsPackage pkg;
    static Path macFile;
    static Path mapFile;

    @BeforeAll
    static void convert() throws IOException {
        pkg = NsfwjsConverterTest.installedPackage();
        macFile = tmp.resolve(MAC.id() + ".onnx");
        Files.write(macFile, NsfwjsConverter.convert(pkg, MAC));
        mapFile = tmp.resolve("block_10_expand_relu_map.onnx");
        Files.write(mapFile, NsfwjsConverter.convert(pkg, "mobilenet_v2", "block_10_expand_relu", Pooling.NONE,
                "block_10_expand_relu_map", Map.of()));
    }

    @Test
    void describesItself() {
        assertEquals("mobilenet_v2_block10_mac", MAC.id());
        assertEquals("mobilenet_v2_mac", MAC.shortName());
        assertEquals("block_10_expand_relu", MAC.cutLayer());
        assertEquals(Pooling.MAX, MAC.pooling());
        assertEquals(384, MAC.dimension());
        assertEquals(224, MAC.inputSize());
        assertSame(MAC, BuiltinModel.byName("mobilenet_v2_mac"));
        assertSame(MAC, BuiltinModel.byName("MOBILENET_V2_BLOCK10_MAC"));
        assertSame(BuiltinModel.MOBILENET_V2_BLOCK10_GAP, BuiltinModel.byName("mobilenet_v2"));
        assertSame(BuiltinModel.MOBILENET_V2_BLOCK10_GAP, BuiltinModel.DEFAULT);
        assertSame(BuiltinModel.INCEPTION_V3_MIXED5_GAP, BuiltinModel.byName("inception_v3_mixed5_gap"));
        assertEquals(Pooling.AVERAGE, BuiltinModel.DEFAULT.pooling());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BuiltinModel.byName("resnet"));
        assertEquals("unknown model 'resnet': expected one of mobilenet_v2, inception_v3, mobilenet_v2_mac,"
                + " mobilenet_v2_block10_gap, inception_v3_mixed5_gap, mobilenet_v2_block10_mac", e.getMessage());
        assertSame(Pooling.MAX, Pooling.byName("Max"));
        assertEquals("GlobalMaxPool", Pooling.MAX.onnxOp());
        assertThrows(IllegalArgumentException.class, () -> Pooling.byName("sum"));
    }

    /** Test (1): the embedding, channel by channel, is the maximum over the 14 x 14 map of the unpooled cut. */
    @Test
    void macIsTheChannelMaximumOfTheFeatureMap() throws Exception {
        List<RgbImage> imgs = NsfwjsConverterTest.images(4);
        float[][] mac = (float[][]) run(macFile, imgs);
        float[][][][] map = (float[][][][]) run(mapFile, imgs);
        assertEquals(imgs.size(), mac.length);
        assertEquals(imgs.size(), map.length);
        double maxDiff = 0;
        int channelsAboveMean = 0;
        int zeroChannels = 0;
        float maxValue = 0;
        for (int n = 0; n < imgs.size(); n++) {
            assertEquals(384, mac[n].length);
            assertEquals(384, map[n].length, "channels of the feature map");
            for (int c = 0; c < 384; c++) {
                assertEquals(14, map[n][c].length, "height of the feature map");
                float max = Float.NEGATIVE_INFINITY;
                double sum = 0;
                for (float[] row : map[n][c]) {
                    assertEquals(14, row.length, "width of the feature map");
                    for (float v : row) {
                        assertTrue(v >= 0f && v <= 6f, "a ReLU6 value outside [0, 6]: " + v);
                        max = Math.max(max, v);
                        sum += v;
                    }
                }
                maxDiff = Math.max(maxDiff, Math.abs(mac[n][c] - max));
                maxValue = Math.max(maxValue, max);
                if (max > sum / 196 + 1e-3) {
                    channelsAboveMean++;
                }
                if (max == 0f) {
                    zeroChannels++;
                }
            }
        }
        System.out.printf("MAC vs max of the 384x14x14 map, %d images: max |difference| %.3g; %d of %d channels"
                        + " have max > mean, %d are all zero, largest value %.3f%n", imgs.size(), maxDiff,
                channelsAboveMean, imgs.size() * 384, zeroChannels, maxValue);
        assertTrue(maxDiff <= 1e-6, "MAC differs from the channel maxima by " + maxDiff);
        // The maps are not constant: max pooling differs from average pooling on most channels.
        assertTrue(channelsAboveMean > imgs.size() * 384 / 2, channelsAboveMean + " channels with max > mean");
    }

    /** Test (2): 384-d, deterministic, L2-normalised; the embedder's vector is the raw MAC scaled to unit length. */
    @Test
    void deterministicUnitNormAndMetadata() throws Exception {
        RgbImage img = TestImages.load("camera/widowx-tictactoe/over_shoulder_cam/move3.jpg");
        RgbImage other = TestImages.load("camera/xarm-rgbd/resources/color_image.png");
        try (OnnxEmbedder e = OnnxEmbedder.open(macFile)) {
            assertEquals(384, e.dimension());
            assertEquals(224, e.inputHeight());
            assertEquals("embedding", e.outputName());
            assertEquals("mobilenet_v2_block10_mac", e.metadata().get("flywheel.model_id"));
            assertEquals("block_10_expand_relu", e.metadata().get("flywheel.cut_layer"));
            assertEquals("max", e.metadata().get("flywheel.pooling"));
            assertEquals("unit", e.metadata().get("flywheel.preprocessing"));
            float[][] a = e.embed(List.of(img));
            float[][] b = e.embed(List.of(img));
            assertArrayEquals(a[0], b[0], "the same image must give the same vector");
            double norm = 0;
            for (float v : a[0]) {
                assertTrue(v >= 0, "a MAC of a ReLU map is never negative: " + v);
                norm += v * v;
            }
            assertEquals(1.0, Math.sqrt(norm), 1e-5);
            float[][] batch = e.embed(List.of(other, img, other));
            assertArrayEquals(a[0], batch[1], 1e-5f);
            assertArrayEquals(batch[0], batch[2], 1e-5f);
            float[] raw = ((float[][]) run(macFile, List.of(img)))[0];
            double rawNorm = 0;
            for (float v : raw) {
                rawNorm += v * v;
            }
            rawNorm = Math.sqrt(rawNorm);
            assertTrue(rawNorm > 1, "raw MAC norm " + rawNorm);
            for (int c = 0; c < raw.length; c++) {
                assertEquals(raw[c] / rawNorm, a[0][c], 1e-6, "channel " + c);
            }
        }
    }

    /**
     * Test (3): of four overlapping 75% crops of each of four photos, every crop's nearest other crop
     * (cosine) is a crop of the same photo. MAC vectors of ReLU maps are all non-negative, so their
     * cosines crowd near 1 (about 0.97 here, 0.6-0.9 for the average-pooled default); the stricter
     * "every own pair nearer than every other pair" is printed, not asserted (it fails for one photo
     * by 0.007 on the 4 photos here: MAC is usually PCA-whitened before such comparisons).
     */
    @Test
    void cropsOfOnePhotoAreNearerThanOtherPhotos() throws IOException {
        String[] photos = {
            "camera/arc2017-rgbd/parallel-jaw-grasping/input-0.color.png",
            "camera/widowx-tictactoe/over_shoulder_cam/move0.jpg",
            "camera/apc2016-rgbd/scene-0000/frame-000004.color.png",
            "camera/xarm-rgbd/resources/color_image.png",
        };
        List<float[]> crops = new ArrayList<>();
        try (OnnxEmbedder e = OnnxEmbedder.open(macFile)) {
            for (String p : photos) {
                RgbImage img = TestImages.load(p);
                int w = img.width() * 3 / 4;
                int h = img.height() * 3 / 4;
                int dx = img.width() - w;
                int dy = img.height() - h;
                crops.addAll(List.of(e.embed(List.of(TestImages.crop(img, 0, 0, w, h), TestImages.crop(img, dx, 0, w, h),
                        TestImages.crop(img, 0, dy, w, h), TestImages.crop(img, dx, dy, w, h)))));
            }
        }
        int misses = 0;
        for (int p = 0; p < photos.length; p++) {
            double minSame = 2;
            double maxOther = -2;
            for (int i = 4 * p; i < 4 * p + 4; i++) {
                int nearest = -1;
                double best = -2;
                for (int j = 0; j < crops.size(); j++) {
                    if (j == i) {
                        continue;
                    }
                    double c = cosine(crops.get(i), crops.get(j));
                    if (c > best) {
                        best = c;
                        nearest = j;
                    }
                    if (j / 4 == p) {
                        minSame = Math.min(minSame, c);
                    } else {
                        maxOther = Math.max(maxOther, c);
                    }
                }
                if (nearest / 4 != p) {
                    misses++;
                    System.out.printf("MAC crop %d of %s: nearest is crop %d of %s (%.4f)%n", i % 4, photos[p], nearest % 4,
                            photos[nearest / 4], best);
                }
            }
            System.out.printf("MAC %s: least similar own crops %.4f, most similar other photo %.4f%n", photos[p], minSame,
                    maxOther);
        }
        assertEquals(0, misses, "crops whose nearest other crop is from another photo");
    }

    /** The cache installs the model under its id and reports its dimension and pooling. */
    @Test
    void cacheInstallsAndDescribesIt() throws IOException {
        ModelCache cache = new ModelCache(tmp.resolve("cache"));
        ModelCache.CachedModel m = cache.install(MAC, pkg);
        assertEquals("mobilenet_v2_block10_mac", m.id());
        assertEquals(cache.dir().resolve("mobilenet_v2_block10_mac.onnx"), m.file());
        assertEquals(384, m.dimension());
        assertEquals("max", m.pooling());
        assertEquals("unit", m.preprocessing());
        assertArrayEquals(Files.readAllBytes(macFile), Files.readAllBytes(m.file()), "conversion is reproducible");
        try (OnnxEmbedder e = cache.open(MAC, 1)) {
            assertEquals("mobilenet_v2_block10_mac", e.modelId());
            assertEquals(384, e.dimension());
        }
        Files.copy(NsfwjsConverterTest.referenceFile(BuiltinModel.DEFAULT), cache.path(BuiltinModel.DEFAULT));
        List<ModelCache.CachedModel> all = cache.list();
        assertEquals(2, all.size());
        assertEquals("mobilenet_v2_block10_gap", all.get(0).id());
        assertEquals("average", all.get(0).pooling(), "the built-in id gives the pooling of a file without the key");
        assertEquals(96, all.get(0).dimension());
        assertEquals("mobilenet_v2_block10_mac", all.get(1).id());
    }

    /** Runs a model on images through ONNX Runtime and returns its first output, not normalised. */
    private static Object run(Path model, List<RgbImage> imgs) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        FloatBuffer buf = FloatBuffer.allocate(imgs.size() * 3 * 224 * 224);
        for (RgbImage img : imgs) {
            Preprocessing.UNIT.fill(img, 224, 224, buf);
        }
        buf.flip();
        try (OrtSession s = env.createSession(model.toString());
             OnnxTensor t = OnnxTensor.createTensor(env, buf, new long[] {imgs.size(), 3, 224, 224});
             OrtSession.Result r = s.run(Map.of("pixel_values", t))) {
            return r.get(0).getValue();
        }
    }

    private static double cosine(float[] a, float[] b) {
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
