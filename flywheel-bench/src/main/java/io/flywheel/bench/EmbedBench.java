package io.flywheel.bench;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.model.OnnxEmbedder;

/**
 * Embedding throughput per model: images/s through {@link OnnxEmbedder#embed} (bilinear resize +
 * scaling + ONNX Runtime inference + L2 normalisation) for ONNX Runtime intra-op threads 1 and 2
 * and batch sizes 1, 8 and 32, on real camera images decoded beforehand (decoding is not timed).
 * Best of RUNS after one warm-up pass. Prints one JSON line per configuration, with the speed-up
 * against batch 1 at the same thread count (the peer measured in the same run).
 *
 * <p>usage: EmbedBench IMAGE_DIR IMAGES RUNS MODEL.onnx...
 */
public final class EmbedBench {
    private EmbedBench() {}

    public static void main(String[] args) throws Exception {
        Path imageDir = Path.of(args[0]);
        int count = Integer.parseInt(args[1]);
        int runs = Integer.parseInt(args[2]);
        List<RgbImage> pool = load(imageDir);
        List<RgbImage> images = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            images.add(pool.get(i % pool.size()));
        }
        for (int m = 3; m < args.length; m++) {
            Path model = Path.of(args[m]);
            int n = model.getFileName().toString().startsWith("inception") ? Math.max(8, count / 4) : count;
            List<RgbImage> batchImages = images.subList(0, Math.min(n, images.size()));
            for (int threads : new int[] {1, 2}) {
                double base = 0;
                for (int batch : new int[] {1, 8, 32}) {
                    try (OnnxEmbedder e = OnnxEmbedder.builder(model).intraOpThreads(threads).maxBatch(batch).build()) {
                        e.embed(batchImages.subList(0, Math.min(batchImages.size(), Math.max(batch, 8)))); // warm-up
                        double best = Double.MAX_VALUE;
                        for (int r = 0; r < runs; r++) {
                            long t0 = System.nanoTime();
                            e.embed(batchImages);
                            best = Math.min(best, (System.nanoTime() - t0) / 1e9);
                        }
                        double ips = batchImages.size() / best;
                        if (batch == 1) {
                            base = ips;
                        }
                        System.out.printf(Locale.ROOT, "{\"model\":\"%s\",\"dimension\":%d,\"threads\":%d,\"batch\":%d,"
                                        + "\"images\":%d,\"images_per_s\":%.1f,\"ms_per_image\":%.2f,\"vs_batch1\":%.2f}%n",
                                e.modelId(), e.dimension(), threads, batch, batchImages.size(), ips, 1000 / ips, ips / base);
                    }
                }
            }
        }
    }

    private static List<RgbImage> load(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(dir)) {
            s.filter(p -> p.toString().endsWith(".jpg") || p.toString().endsWith(".color.png")).sorted().forEach(files::add);
        }
        ImageIO.setUseCache(false);
        List<RgbImage> out = new ArrayList<>();
        for (Path p : files) {
            BufferedImage img = ImageIO.read(p.toFile());
            if (img == null) {
                continue;
            }
            int w = img.getWidth();
            int h = img.getHeight();
            byte[] px = new byte[w * h * 3];
            int[] row = new int[w];
            for (int y = 0; y < h; y++) {
                img.getRGB(0, y, w, 1, row, 0, w);
                for (int x = 0; x < w; x++) {
                    px[(y * w + x) * 3] = (byte) (row[x] >> 16);
                    px[(y * w + x) * 3 + 1] = (byte) (row[x] >> 8);
                    px[(y * w + x) * 3 + 2] = (byte) row[x];
                }
            }
            out.add(new RgbImage(w, h, px));
        }
        if (out.isEmpty()) {
            throw new IOException(dir + ": no .jpg or .color.png images");
        }
        return out;
    }
}
