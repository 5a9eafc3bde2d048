package io.flywheel.curate.trainset;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;



/**
 * Draws a {@link TrainsetDiff} as a PNG: one panel per dimension (scene, object, task, robot)
 * with a pair of horizontal bars per value, the share of the older set (grey) above the share of
 * the newer one (blue), and the hard-case shares in the title.
 */
public final class CompositionChart {
    private static final int WIDTH = 900;
    private static final int BAR = 9;
    private static final int ROW = 2 * BAR + 6;
    private static final int MAX_VALUES = 12;
    private static final Color FROM = new Color(150, 150, 150);
    private static final Color TO = new Color(45, 110, 200);

    private CompositionChart() {}

    /**
     * @param diff the diff to draw
     * @param out PNG file to write (parent folders are created)
     * @throws IOException when the file cannot be written
     */
    public static void write(TrainsetDiff diff, Path out) throws IOException {
        List<String> dims = new ArrayList<>();
        int rows = 0;
        for (String d : TrainsetDiff.DIMENSIONS) {
            int n = Math.min(MAX_VALUES, diff.composition().get(d).size());
            if (n > 0) {
                dims.add(d);
                rows += n;
            }
        }
        int height = 70 + dims.size() * 30 + rows * ROW + 20;
        BufferedImage img = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(String.format(Locale.ROOT, "%s (%d episodes) -> %s (%d episodes): +%d / -%d", diff.from(),
                    diff.fromCount(), diff.to(), diff.toCount(), diff.added().size(), diff.removed().size()), 12, 22);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            g.drawString(String.format(Locale.ROOT, "hard-case share %.1f%% -> %.1f%% (%s)",
                    100 * diff.hardShareFrom(), 100 * diff.hardShareTo(), diff.hardCaseRule()), 12, 42);
            legend(g, 12, 56);
            int y = 70;
            int labelW = 250;
            int plotW = WIDTH - labelW - 80;
            for (String d : dims) {
                y += 22;
                g.setColor(Color.BLACK);
                g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
                g.drawString(d, 12, y);
                y += 8;
                g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
                List<Map.Entry<String, long[]>> entries = new ArrayList<>(diff.composition().get(d).entrySet());
                entries.sort((p, q) -> Long.compare(q.getValue()[0] + q.getValue()[1], p.getValue()[0] + p.getValue()[1]));
                for (Map.Entry<String, long[]> e : entries.subList(0, Math.min(MAX_VALUES, entries.size()))) {
                    double sa = diff.fromCount() == 0 ? 0 : (double) e.getValue()[0] / diff.fromCount();
                    double sb = diff.toCount() == 0 ? 0 : (double) e.getValue()[1] / diff.toCount();
                    g.setColor(Color.DARK_GRAY);
                    String label = e.getKey().isEmpty() ? "(unknown)" : e.getKey();
                    if (label.length() > 38) {
                        label = label.substring(0, 37) + "...";
                    }
                    g.drawString(label, 20, y + BAR + 4);
                    bar(g, labelW, y, plotW, sa, FROM);
                    bar(g, labelW, y + BAR + 1, plotW, sb, TO);
                    y += ROW;
                }
            }
            g.setColor(Color.LIGHT_GRAY);
            g.setStroke(new BasicStroke(1));
            g.drawLine(labelW, 70, labelW, height - 10);
        } finally {
            g.dispose();
        }
        io.flywheel.plot.Png.write(img, out);
    }

    private static void bar(Graphics2D g, int x, int y, int w, double share, Color c) {
        g.setColor(c);
        g.fillRect(x, y, (int) Math.round(w * share), BAR);
        g.setColor(Color.DARK_GRAY);
        g.drawString(String.format(Locale.ROOT, "%.1f%%", 100 * share), x + (int) Math.round(w * share) + 4, y + BAR);
    }

    private static void legend(Graphics2D g, int x, int y) {
        g.setColor(FROM);
        g.fillRect(x, y - 8, 12, 8);
        g.setColor(Color.BLACK);
        g.drawString("older set", x + 16, y);
        g.setColor(TO);
        g.fillRect(x + 100, y - 8, 12, 8);
        g.setColor(Color.BLACK);
        g.drawString("newer set", x + 116, y);
    }
}
