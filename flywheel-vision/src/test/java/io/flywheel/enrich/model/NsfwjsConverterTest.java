package io.flywheel.enrich.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import io.flywheel.enrich.RgbImage;
import io.flywheel.testkit.Node;
import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The project's converter reproduces the reference models in shared/models (made offline with
 * Python onnx from the same nsfwjs 4.4.0 files): both run on the same real camera images and give
 * the same embeddings within 1e-4.
 */
class NsfwjsConverterTest {
    static final String[] IMAGES = {
        "camera/widowx-tictactoe/over_shoulder_cam/move0.jpg",
        "camera/widowx-tictactoe/top_down_cam/td_move5.jpg",
        "camera/arc2017-rgbd/parallel-jaw-grasping/input-0.color.png",
        "camera/apc2016-rgbd/scene-0000/frame-000004.color.png",
        "camera/xarm-rgbd/resources/color_image.png",
        "camera/bridge-octo-rlds/frames_jpeg/ep00/image_0/00.jpg",
    };

    @TempDir
    Path tmp;

    static NsfwjsPackage installedPackage() throws IOException {
        return NsfwjsPackage.fromDirectory(Node.toolsDir().resolve("node_modules/nsfwjs"));
    }

    static List<RgbImage> images(int n) throws IOException {
        List<RgbImage> out = new ArrayList<>();
        for (int i = 0; i < n && i < IMAGES.length; i++) {
            out.add(TestImages.load(IMAGES[i]));
        }
        return out;
    }

    static Path referenceFile(BuiltinModel model) {
        return SharedData.shared("models/" + model.id() + ".onnx");
    }

    /*
     * The sha256 values pin the converter's bytes for the average-pooled models as they were before
     * the max-pooled model was added, so the files already in users' caches keep their hash.
     */
    @Test
    void mobilenetMatchesReference() throws Exception {
        compare(BuiltinModel.MOBILENET_V2_BLOCK10_GAP, 5, "66f1e5a5a343972d1be2c1932716771551d44bd671e72fe78b2f56cb7249f898");
    }

    @Test
    void inceptionMatchesReference() throws Exception {
        compare(BuiltinModel.INCEPTION_V3_MIXED5_GAP, 2, "2dd6023d0fae1233281d1fec5608cf80e2f0d1fa5c7ef053f6d498dec4950ac3");
    }

    private void compare(BuiltinModel model, int count, String sha256) throws Exception {
        Path reference = referenceFile(model);
        byte[] onnx = NsfwjsConverter.convert(installedPackage(), model);
        assertEquals(sha256, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(onnx)),
                model.id() + ": the converted bytes changed");
        Path converted = tmp.resolve(model.id() + ".onnx");
        Files.write(converted, onnx);
        List<RgbImage> imgs = images(count);
        try (OnnxEmbedder ours = OnnxEmbedder.open(converted); OnnxEmbedder ref = OnnxEmbedder.open(reference)) {
            assertEquals(model.dimension(), ours.dimension());
            assertEquals(ref.dimension(), ours.dimension());
            assertEquals("pixel_values", ours.inputName());
            assertEquals("embedding", ours.outputName());
            assertEquals(model.inputSize(), ours.inputHeight());
            float[][] a = ours.embed(imgs);
            float[][] b = ref.embed(imgs);
            double maxDiff = 0;
            for (int i = 0; i < a.length; i++) {
                for (int j = 0; j < a[i].length; j++) {
                    maxDiff = Math.max(maxDiff, Math.abs(a[i][j] - b[i][j]));
                }
            }
            double rawDiff = rawMaxDiff(converted, reference, imgs, model.inputSize());
            System.out.printf("%s: %d images, max |difference| normalised %.3g, raw %.3g%n", model.id(), imgs.size(),
                    maxDiff, rawDiff);
            assertTrue(maxDiff <= 1e-4, model.id() + ": normalised embeddings differ by " + maxDiff);
            assertTrue(rawDiff <= 1e-4, model.id() + ": raw embeddings differ by " + rawDiff);
        }
    }

    /** The largest difference of the models' raw (not normalised) outputs. */
    private static double rawMaxDiff(Path a, Path b, List<RgbImage> imgs, int side) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        FloatBuffer buf = FloatBuffer.allocate(imgs.size() * 3 * side * side);
        for (RgbImage img : imgs) {
            Preprocessing.UNIT.fill(img, side, side, buf);
        }
        buf.flip();
        float[][] ra;
        float[][] rb;
        try (OrtSession sa = env.createSession(a.toString()); OrtSession sb = env.createSession(b.toString());
             OnnxTensor t = OnnxTensor.createTensor(env, buf, new long[] {imgs.size(), 3, side, side});
             OrtSession.Result x = sa.run(Map.of("pixel_values", t)); OrtSession.Result y = sb.run(Map.of("pixel_values", t))) {
            ra = (float[][]) x.get(0).getValue();
            rb = (float[][]) y.get(0).getValue();
        }
        double max = 0;
        for (int i = 0; i < ra.length; i++) {
            for (int j = 0; j < ra[i].length; j++) {
                max = Math.max(max, Math.abs(ra[i][j] - rb[i][j]));
            }
        }
        return max;
    }
}
