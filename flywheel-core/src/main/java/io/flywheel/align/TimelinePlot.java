package io.flywheel.align;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;



/**
 * Draws an alignment the way an oscilloscope shows two signals: the master clock's frames on one
 * timeline, another stream's messages on a second, a line from each frame to the message it was
 * paired with, and frames left without a value (beyond tolerance, or dropped) marked in red. When
 * the true capture times are known (a simulated fleet), a third timeline shows them, so that an
 * unsynced clock is visible: small observed residuals while the true error is large.
 *
 * <p>An overview strip on top shows the whole episode (every frame, unpaired ones in red) and where the drawn window
 * lies in it. PNG output, 1200 x 480 pixels; times are shown in milliseconds after the episode's first frame; lane names are
 * written in full above their lanes.
 */
public final class TimelinePlot {
    private TimelinePlot() {}

    /**
     * What to draw.
     *
     * @param title heading, e.g. "episode ep_00001: /joint_states as-of 20 ms"
     * @param masterName name of the master clock (topic or "50 Hz")
     * @param frameTimesNs frame times, int64 ns, ascending
     * @param streamName name of the paired stream
     * @param streamTimesNs the stream's corrected message times, int64 ns, ascending
     * @param matchIndex per frame, the index into {@code streamTimesNs} it was paired with, or -1
     * @param trueFrameTimesNs per frame, the true capture time in ns, or null when unknown
     * @param windowStartNs first time shown
     * @param windowNs span shown, ns (e.g. 400 ms)
     */
    public record Spec(String title, String masterName, long[] frameTimesNs, String streamName,
                       long[] streamTimesNs, int[] matchIndex, long[] trueFrameTimesNs,
                       long windowStartNs, long windowNs) {}

    private static final int W = 1200;
    private static final int H = 480;
    private static final int LEFT = 40;
    private static final int RIGHT = 30;

    /**
     * Renders {@code spec} to a PNG file.
     *
     * @throws IOException when the file cannot be written
     * @throws IllegalArgumentException when the array lengths disagree or the window is empty
     */
    public static void render(Spec spec, Path png) throws IOException {
        if (spec.matchIndex().length != spec.frameTimesNs().length
                || spec.trueFrameTimesNs() != null && spec.trueFrameTimesNs().length != spec.frameTimesNs().length) {
            throw new IllegalArgumentException("matchIndex and trueFrameTimesNs need one entry per frame");
        }
        if (spec.windowNs() <= 0) {
            throw new IllegalArgumentException("window must be positive, got " + spec.windowNs() + " ns");
        }
        BufferedImage img = new BufferedImage(W, H, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, W, H);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(spec.title(), 20, 28);

            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            overview(g, spec, 56);
            boolean truth = spec.trueFrameTimesNs() != null;
            int yTrue = 150;
            int yMaster = truth ? 250 : 190;
            int yStream = truth ? 360 : 340;
            if (truth) {
                lane(g, yTrue, "true capture", new Color(0, 130, 60));
            }
            lane(g, yMaster, "master: " + spec.masterName(), new Color(30, 80, 200));
            lane(g, yStream, spec.streamName(), new Color(90, 90, 90));

            long t0 = spec.windowStartNs();
            long t1 = t0 + spec.windowNs();
            long[] st = spec.streamTimesNs();
            g.setColor(new Color(90, 90, 90));
            for (long t : st) {
                if (t >= t0 && t <= t1) {
                    int x = x(t, t0, spec.windowNs());
                    g.drawLine(x, yStream - 10, x, yStream + 10);
                }
            }
            long[] ft = spec.frameTimesNs();
            for (int f = 0; f < ft.length; f++) {
                long t = ft[f];
                if (t < t0 || t > t1) {
                    continue;
                }
                int x = x(t, t0, spec.windowNs());
                int m = spec.matchIndex()[f];
                if (truth) {
                    long tt = spec.trueFrameTimesNs()[f];
                    int xt = x(tt, t0, spec.windowNs());
                    g.setColor(new Color(0, 130, 60));
                    g.fillOval(xt - 4, yTrue - 4, 8, 8);
                    g.setColor(new Color(0, 130, 60, 110));
                    g.setStroke(new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {3f, 3f}, 0f));
                    g.drawLine(xt, yTrue, x, yMaster);
                    g.setStroke(new BasicStroke(1f));
                }
                if (m >= 0) {
                    g.setColor(new Color(30, 80, 200));
                    g.fillRect(x - 2, yMaster - 12, 4, 24);
                    g.setColor(new Color(230, 140, 0));
                    g.setStroke(new BasicStroke(1.6f));
                    g.drawLine(x, yMaster + 12, x(st[m], t0, spec.windowNs()), yStream - 10);
                    g.setStroke(new BasicStroke(1f));
                } else {
                    g.setColor(new Color(210, 30, 30));
                    g.fillRect(x - 2, yMaster - 12, 4, 24);
                    g.drawLine(x - 6, yMaster + 16, x + 6, yMaster + 28);
                    g.drawLine(x + 6, yMaster + 16, x - 6, yMaster + 28);
                }
            }
            axis(g, H - 50, t0, spec.windowNs(), spec.frameTimesNs().length == 0 ? 0 : t0 - spec.frameTimesNs()[0]);
            g.setColor(Color.DARK_GRAY);
            g.drawString("orange: pairing used for training rows; red: frame without a value (beyond tolerance or dropped)"
                    + (truth ? "; green: true capture time" : ""), 20, H - 12);
        } finally {
            g.dispose();
        }
        io.flywheel.plot.Png.write(img, png);
    }

    private static int x(long t, long t0, long span) {
        return LEFT + (int) Math.round((double) (t - t0) / span * (W - LEFT - RIGHT));
    }

    private static void lane(Graphics2D g, int y, String label, Color c) {
        g.setColor(new Color(235, 235, 235));
        g.drawLine(LEFT, y, W - RIGHT, y);
        g.setColor(c);
        g.drawString(label, LEFT, y - 18); // in full, above the lane: topic names are long
    }

    /** The whole episode on one strip: a tick per frame (red when unpaired), the drawn window shaded. */
    private static void overview(Graphics2D g, Spec spec, int y) {
        long[] ft = spec.frameTimesNs();
        if (ft.length == 0) {
            return;
        }
        long t0 = Math.min(ft[0], spec.windowStartNs());
        long span = Math.max(1, Math.max(ft[ft.length - 1], spec.windowStartNs() + spec.windowNs()) - t0);
        int xa = x(spec.windowStartNs(), t0, span);
        int xb = Math.max(xa + 2, x(spec.windowStartNs() + spec.windowNs(), t0, span));
        g.setColor(new Color(255, 236, 200));
        g.fillRect(xa, y - 2, xb - xa, 26);
        int unpaired = 0;
        for (int f = 0; f < ft.length; f++) {
            boolean paired = spec.matchIndex()[f] >= 0;
            unpaired += paired ? 0 : 1;
            g.setColor(paired ? new Color(30, 80, 200, 90) : new Color(210, 30, 30));
            int x = x(ft[f], t0, span);
            g.fillRect(x, y + (paired ? 6 : 0), paired ? 1 : 2, paired ? 10 : 22);
        }
        g.setColor(Color.DARK_GRAY);
        g.drawString(String.format(Locale.ROOT, "whole episode: %d frames over %.1f s, %d unpaired (red); shaded: the"
                + " window drawn below, %.0f ms from %.0f ms", ft.length, (ft[ft.length - 1] - ft[0]) / 1e9, unpaired,
                spec.windowNs() / 1e6, (spec.windowStartNs() - ft[0]) / 1e6), LEFT, y - 8);
    }

    /** The time axis, labelled in ms after the episode's first frame ({@code labelOffsetNs} at the window start). */
    private static void axis(Graphics2D g, int y, long t0, long span, long labelOffsetNs) {
        g.setColor(Color.BLACK);
        g.drawLine(LEFT, y, W - RIGHT, y);
        double ms = span / 1e6;
        double step = ms <= 100 ? 10 : ms <= 500 ? 50 : ms <= 2000 ? 200 : 1000;
        for (double v = 0; v <= ms + 1e-9; v += step) {
            int x = x(t0 + (long) (v * 1e6), t0, span);
            g.drawLine(x, y - 4, x, y + 4);
            String s = String.format(Locale.ROOT, "%.0f ms", v + labelOffsetNs / 1e6);
            g.drawString(s, x - g.getFontMetrics().stringWidth(s) / 2, y + 20);
        }
    }
}
