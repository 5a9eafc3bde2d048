package io.flywheel.sim;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Benchmark, not a test: frames/s of the JPEG encoders (OpenCV/libjpeg-turbo vs ImageIO) on
 * simulator frames, the renderer alone, and a whole single-threaded episode (real-time factor).
 *
 * <p>Run: {@code java -cp <test classpath> io.flywheel.sim.JpegBench [width height frames]}.
 */
public final class JpegBench {
    private JpegBench() {}

    public static void main(String[] args) throws Exception {
        int w = args.length > 0 ? Integer.parseInt(args[0]) : 320;
        int h = args.length > 1 ? Integer.parseInt(args[1]) : 240;
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 1500;
        SimOptions o = SimOptions.builder(Preset.BENCH).resolution(w, h).episodes(1).robots(1).episodeSeconds(10)
                .outDir(Files.createTempDirectory("jpegbench")).threads(1).build();
        FleetPlan plan = FleetPlan.plan(o);
        EpisodeSpec spec = plan.episodes().get(0);
        Demonstration demo = new Demonstration(spec, 10, new java.util.SplittableRandom(1));
        Renderer r = new Renderer(w, h);
        Renderer.State s = new Renderer.State();
        s.scene = spec.scene();
        s.lighting = spec.lighting();
        s.object = spec.object();
        s.markers = new double[0][];
        System.arraycopy(demo.bin, 0, s.bin, 0, 3);
        byte[][] frames = new byte[64][];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            double tau = 10.0 * (i % 300) / 300;
            demo.activeEffector(tau, demo.leftActive ? s.leftEe : s.rightEe);
            demo.idleEffector(tau, demo.leftActive ? s.rightEe : s.leftEe);
            demo.objectPosition(tau, demo.leftActive ? s.leftEe : s.rightEe, s.objectPos);
            r.camera(new double[] {-0.15, 0, 0.85}, new double[] {0.7, 0, -0.85}, new double[] {0, 0, 1});
            r.draw(s, 0);
            r.noise(2.0, i);
            if (i < frames.length) {
                frames[i] = r.bgr.clone();
            }
        }
        double render = n / ((System.nanoTime() - t0) / 1e9);
        System.out.printf(Locale.ROOT, "%dx%d render+noise: %.0f frames/s%n", w, h, render);
        for (JpegEncoder.Kind k : new JpegEncoder.Kind[] {JpegEncoder.Kind.OPENCV, JpegEncoder.Kind.IMAGEIO}) {
            try (JpegEncoder enc = JpegEncoder.create(k, 85)) {
                for (int i = 0; i < 200; i++) {
                    enc.encode(frames[i % frames.length], w, h); // warm-up
                }
                long bytes = 0;
                long t = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    bytes += enc.encode(frames[i % frames.length], w, h).length;
                }
                double fps = n / ((System.nanoTime() - t) / 1e9);
                System.out.printf(Locale.ROOT, "%dx%d %s encode: %.0f frames/s, %d bytes/frame%n", w, h, enc.name(), fps,
                        bytes / n);
            } catch (IllegalStateException e) {
                System.out.println(k + ": unavailable (" + e.getMessage() + ")");
            }
        }
        SimSummary sum = FleetSimulator.run(o, ProgressListener.NONE);
        System.out.printf(Locale.ROOT, "one %.1f s episode, 1 thread, %s: %.1f s wall, %.0f frames/s, %.1fx real time%n",
                sum.simulatedSeconds(), sum.jpegEncoder(), sum.wallSeconds(), sum.framesPerSecond(), sum.realTimeFactor());
        deleteTree(o.outDir());
    }

    private static void deleteTree(Path p) throws java.io.IOException {
        try (var s = Files.walk(p)) {
            for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }
}
