package io.flywheel.serve.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.rows.FrameRow;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.quality.RuleSet;
import io.flywheel.testkit.SharedData;

/** The loader over a training set of the 25 real BridgeData episodes (10 frames, 3 cameras each). */
class TrainsetLoaderTest {
    @TempDir
    static Path tmp;
    static Path lakeDir;
    static Map<String, FrameRow> frames = new HashMap<>();

    @BeforeAll
    static void build() throws IOException {
        lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(0.4).seed(3).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            try (LakeTable t = lake.table("frames")) {
                for (FrameRow f : t.frames(ScanRequest.all())) {
                    frames.put(f.episodeId() + "/" + f.frameIndex(), f);
                }
            }
        }
    }

    @Test
    void randomAccessReturnsTheFrameValuesAndTheRealJpegBytes() throws IOException {
        try (Lake lake = Lake.open(lakeDir); TrainsetLoader l = TrainsetLoader.open(lake, "train-v1",
                LoaderOptions.builder().images(LoaderOptions.Images.DECODED).build())) {
            assertEquals(100, l.size()); // 10 of 25 episodes x 10 frames
            List<Sample> s = l.get(57, 3, 57, 99);
            assertEquals(List.of(57L, 3L, 57L, 99L), s.stream().map(Sample::sampleIndex).toList());
            for (Sample x : s) {
                FrameRow f = frames.get(x.episodeId() + "/" + x.frameIndex());
                assertArrayEquals(f.state(), x.state());
                assertArrayEquals(f.action(), x.action());
                assertEquals(f.timestampNs(), x.timestampNs());
                assertEquals(x.sampleIndex() % 10, x.frameIndex());
                assertEquals(3, x.images().size());
                for (CameraImage img : x.images()) {
                    assertEquals("raw", img.source());
                    assertEquals((byte) 0xFF, img.bytes()[0]); // JPEG SOI
                    assertEquals((byte) 0xD8, img.bytes()[1]);
                    assertEquals(64, img.decoded().width()); // BridgeData frames are 64x64
                    assertEquals(64, img.decoded().height());
                }
            }
            // the bytes are the camera's message payload in the raw MCAP, as the ingest locator says
            CameraImage first = s.get(1).images().get(0);
            FrameRow f = frames.get(s.get(1).episodeId() + "/" + s.get(1).frameIndex());
            assertEquals(f.images().get(0).length(), first.bytes().length);
            assertThrows(IndexOutOfBoundsException.class, () -> l.get(100));
        }
    }

    @Test
    void epochsAreSeededPermutationsAndBatchesFollowThemWithPrefetch() {
        try (Lake lake = Lake.open(lakeDir)) {
            LoaderOptions o = LoaderOptions.builder().batchSize(16).seed(11).threads(2).prefetch(3)
                    .images(LoaderOptions.Images.NONE).build();
            try (TrainsetLoader a = TrainsetLoader.open(lake, "train-v1", o);
                    TrainsetLoader b = TrainsetLoader.open(lake, "train-v1",
                            LoaderOptions.builder().batchSize(16).seed(11).threads(1).prefetch(1)
                                    .images(LoaderOptions.Images.NONE).build())) {
                long[] e0 = a.epochOrder(0);
                long[] sorted = e0.clone();
                Arrays.sort(sorted);
                long[] identity = new long[100];
                Arrays.setAll(identity, i -> i);
                assertArrayEquals(identity, sorted);
                assertArrayEquals(e0, b.epochOrder(0));
                assertNotEquals(Arrays.toString(e0), Arrays.toString(a.epochOrder(1)));
                assertEquals(7, a.batchesPerEpoch()); // 6 x 16 + 4
                List<Long> seenA = new ArrayList<>();
                List<Long> seenB = new ArrayList<>();
                Iterator<List<Sample>> ia = a.epoch(0);
                Iterator<List<Sample>> ib = b.epoch(0);
                int batches = 0;
                while (ia.hasNext()) {
                    List<Sample> ba = ia.next();
                    List<Sample> bb = ib.next();
                    assertEquals(batches < 6 ? 16 : 4, ba.size());
                    ba.forEach(x -> seenA.add(x.sampleIndex()));
                    bb.forEach(x -> seenB.add(x.sampleIndex()));
                    batches++;
                }
                assertEquals(7, batches);
                assertEquals(seenA, seenB); // same seed, same batches, whatever threads and prefetch
                assertEquals(Arrays.stream(e0).boxed().toList(), seenA);
                Set<Long> unique = new HashSet<>(seenA);
                assertEquals(100, unique.size());
            }
            try (TrainsetLoader d = TrainsetLoader.open(lake, "train-v1",
                    LoaderOptions.builder().batchSize(16).dropLast(true).images(LoaderOptions.Images.NONE).build())) {
                assertEquals(6, d.batchesPerEpoch());
            }
            assertThrows(io.flywheel.error.NotFoundException.class, () -> TrainsetLoader.open(lake, "nope", o));
        }
    }

    /**
     * Decoded pixels: every camera image of a few samples, decoded by the loader (libjpeg-turbo straight to RGB),
     * equals the enrich decoder's image of the same bytes (decode to BGR, then cvtColor) byte for byte, and agrees
     * with the JDK's own JPEG decoder (ImageIO, an independent libjpeg build) to within rounding.
     */
    @Test
    void decodedPixelsEqualAReferenceDecodeOfTheSameJpeg() throws IOException {
        try (Lake lake = Lake.open(lakeDir); TrainsetLoader l = TrainsetLoader.open(lake, "train-v1",
                LoaderOptions.builder().images(LoaderOptions.Images.DECODED).build());
                io.flywheel.enrich.image.ImageDecoder ref = new io.flywheel.enrich.image.ImageDecoder()) {
            int images = 0;
            for (Sample x : l.get(0, 41, 98)) {
                for (CameraImage img : x.images()) {
                    io.flywheel.enrich.RgbImage want = ref.decode(img.bytes(),
                            io.flywheel.enrich.image.ImageFormat.JPEG, "test").rgb();
                    assertEquals(want.width(), img.decoded().width());
                    assertEquals(want.height(), img.decoded().height());
                    assertArrayEquals(want.pixels(), img.decoded().pixels(), x.sampleIndex() + " " + img.topic());
                    java.awt.image.BufferedImage bi = javax.imageio.ImageIO.read(
                            new java.io.ByteArrayInputStream(img.bytes()));
                    long diff = 0;
                    int worst = 0;
                    for (int y = 0; y < bi.getHeight(); y++) {
                        for (int xx = 0; xx < bi.getWidth(); xx++) {
                            int rgb = bi.getRGB(xx, y);
                            for (int c = 0; c < 3; c++) {
                                int d = Math.abs(((rgb >> (16 - 8 * c)) & 0xFF) - img.decoded().at(xx, y, c));
                                diff += d;
                                worst = Math.max(worst, d);
                            }
                        }
                    }
                    double mean = diff / (bi.getWidth() * bi.getHeight() * 3.0);
                    assertTrue(mean < 1.0 && worst <= 8, "mean " + mean + " worst " + worst);
                    images++;
                }
            }
            assertEquals(9, images);
        }
    }

    /** The loader's decoder: PNG and raw arrays go through the enrich decoder; bad bytes name the image. */
    @Test
    void rgbDecoderHandlesPngRawAndBadBytes() throws IOException {
        try (RgbDecoder d = new RgbDecoder(); io.flywheel.enrich.image.ImageDecoder ref =
                new io.flywheel.enrich.image.ImageDecoder()) {
            byte[] png = java.nio.file.Files.readAllBytes(
                    SharedData.data("camera/arc2017-rgbd/parallel-jaw-grasping/input-0.color.png"));
            io.flywheel.enrich.RgbImage p = d.decode(png, "png", 0, 0, "input-0.color.png");
            assertArrayEquals(ref.decode(png, io.flywheel.enrich.image.ImageFormat.PNG, "x").rgb().pixels(), p.pixels());
            // raw rgb8 2x1: red, then blue
            io.flywheel.enrich.RgbImage raw = d.decode(new byte[] {(byte) 255, 0, 0, 0, 0, (byte) 255}, "rgb8", 2, 1,
                    "raw");
            assertArrayEquals(new byte[] {(byte) 255, 0, 0, 0, 0, (byte) 255}, raw.pixels());
            var e = assertThrows(io.flywheel.enrich.image.ImageDecodeException.class,
                    () -> d.decode(new byte[] {(byte) 0xFF, (byte) 0xD8, 1, 2, 3}, "jpeg", 0, 0, "cam0 of sample 7"));
            assertTrue(e.getMessage().contains("cam0 of sample 7"), e.getMessage());
        }
    }

}
