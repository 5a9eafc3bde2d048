package io.flywheel.bench;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import io.flywheel.enrich.image.FrameAnalysis;
import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.enrich.image.GreyImage;
import io.flywheel.enrich.image.ImageDecoder;
import io.flywheel.enrich.image.ImageFormat;
import io.flywheel.enrich.image.ImageMetrics;
import io.flywheel.enrich.image.PerceptualHash;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.MessageView;
import io.flywheel.mcap.Record;
import io.flywheel.ros.cdr.CdrFastPaths;

/**
 * Per-image enrich work on one thread (run it pinned to one core: bench/enrich.sh), against ImageIO decoding the
 * same JPEGs, in one JVM, modes taking turns. The JPEGs are the simulator's 320x240 camera frames, read from its
 * MCAP files into memory first.
 *
 * <p>usage: EnrichBench FLEET_DIR [FRAMES] [RUNS]
 */
public final class EnrichBench {
    private EnrichBench() {}

    interface Mode {
        long run(List<byte[]> jpegs) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Path fleet = Path.of(args[0]);
        int max = args.length > 1 ? Integer.parseInt(args[1]) : 1500;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        List<byte[]> jpegs = load(fleet, max);
        long bytes = jpegs.stream().mapToLong(b -> b.length).sum();
        System.out.printf("%d JPEG frames from %s, mean %d bytes%n", jpegs.size(), fleet, bytes / jpegs.size());
        ImageIO.setUseCache(false);
        ImageDecoder dec = new ImageDecoder();
        FrameAnalyzer full = new FrameAnalyzer(FrameAnalyzer.Options.defaults());
        FrameAnalyzer small = new FrameAnalyzer(FrameAnalyzer.Options.defaults().withHot(224, 90));
        Map<String, Mode> modes = new LinkedHashMap<>();
        modes.put("imageio decode (peer)", js -> {
            long s = 0;
            for (byte[] j : js) {
                s += ImageIO.read(new ByteArrayInputStream(j)).getRGB(5, 5);
            }
            return s;
        });
        modes.put("enrich analyze: colour decode + grey + sharpness + pHash + thumbnail (hot copy = source)", js -> {
            long s = 0;
            for (byte[] j : js) {
                FrameAnalysis a = full.analyze(j, ImageFormat.JPEG, "bench");
                s += a.phash() + (long) a.sharpness() + a.thumbnail().pixels()[7];
            }
            return s;
        });
        modes.put("same + hot copy re-encoded at 224 px", js -> {
            long s = 0;
            for (byte[] j : js) {
                FrameAnalysis a = small.analyze(j, ImageFormat.JPEG, "bench");
                s += a.phash() + a.hotJpeg().length;
            }
            return s;
        });
        modes.put("grey decode + sharpness + pHash", js -> {
            long s = 0;
            for (byte[] j : js) {
                GreyImage g = dec.decodeGrey(j, ImageFormat.JPEG, 1, "bench");
                s += PerceptualHash.of(g) + (long) ImageMetrics.sharpness(g);
            }
            return s;
        });
        modes.put("reduced 1/4 grey decode + pHash", js -> {
            long s = 0;
            for (byte[] j : js) {
                s += PerceptualHash.of(dec.decodeGrey(j, ImageFormat.JPEG, 4, "bench"));
            }
            return s;
        });
        Map<String, double[]> rates = new LinkedHashMap<>();
        modes.keySet().forEach(k -> rates.put(k, new double[runs]));
        for (int w = 0; w < 2; w++) {
            for (Mode m : modes.values()) {
                m.run(jpegs);
            }
        }
        for (int r = 0; r < runs; r++) {
            for (Map.Entry<String, Mode> e : modes.entrySet()) {
                long t0 = System.nanoTime();
                long sink = e.getValue().run(jpegs);
                double secs = (System.nanoTime() - t0) / 1e9;
                rates.get(e.getKey())[r] = jpegs.size() / secs;
                if (sink == 42) {
                    System.out.print("");
                }
            }
        }
        double peer = median(rates.get("imageio decode (peer)"));
        System.out.printf("%n| mode (one core) | frames/s (median of %d) | range | vs ImageIO decode |%n|---|---:|---|---:|%n", runs);
        for (Map.Entry<String, double[]> e : rates.entrySet()) {
            double[] v = e.getValue().clone();
            Arrays.sort(v);
            System.out.printf("| %s | %.0f | %.0f-%.0f | %.2fx |%n", e.getKey(), median(e.getValue()), v[0], v[v.length - 1],
                    median(e.getValue()) / peer);
        }
        full.close();
        small.close();
        dec.close();
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static List<byte[]> load(Path fleet, int max) throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.walk(fleet)) {
            files = s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
        List<byte[]> out = new ArrayList<>();
        for (Path f : files) {
            try (McapIndexedReader r = McapIndexedReader.open(f)) {
                McapIndexedReader.MessageIterator it = r.messages(McapIndexedReader.ReadOptions.builder().build());
                while (it.hasNext() && out.size() < max) {
                    MessageView m = it.next();
                    Record.Schema schema = m.schema();
                    if (schema != null && schema.name().endsWith("CompressedImage")) {
                        ByteBuffer d = CdrFastPaths.compressedImage(m.message().data()).data();
                        byte[] b = new byte[d.remaining()];
                        d.duplicate().get(b);
                        out.add(b);
                    }
                }
            }
            if (out.size() >= max) {
                break;
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("no CompressedImage messages in the .mcap files under " + fleet);
        }
        return out;
    }
}
