package io.flywheel.eval;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.flywheel.plot.Png;

/**
 * The heatmap picture of a report or a comparison: one row per combination of every dimension but the last, one
 * column per value of the last, each cell coloured by its success rate (report: red 0 to green 1) or its difference
 * (comparison: red for a fall, blue for a rise, full at 0.5), with the value and the rollouts written in it;
 * regressions are outlined in black. Cells without rollouts stay grey.
 */
public final class Heatmap {
    private Heatmap() {}

    private record Entry(double value, String text, boolean outlined) {}

    /** Writes the report's heatmap as a PNG. */
    public static void write(EvalReport r, Path out) throws IOException {
        Png.write(image(r), out);
    }

    /** Writes the comparison's heatmap (B - A) as a PNG. */
    public static void write(EvalComparison c, Path out) throws IOException {
        Png.write(image(c), out);
    }

    /** @return the report's heatmap */
    public static BufferedImage image(EvalReport r) {
        Map<List<String>, Entry> cells = new LinkedHashMap<>();
        for (EvalReport.Cell c : r.cells()) {
            cells.put(List.copyOf(c.key().values()), new Entry(c.successRate(), String.format(Locale.ROOT,
                    "%.2f n=%d", c.successRate(), c.episodes()), false));
        }
        return draw(r.dimensions(), cells, false, "run " + r.run().runId() + " (" + r.run().policyVersion()
                + "): success rate, " + r.total().episodes() + " rollouts");
    }

    /** @return the comparison's heatmap (B - A) */
    public static BufferedImage image(EvalComparison c) {
        Map<List<String>, Entry> cells = new LinkedHashMap<>();
        for (EvalComparison.Cell x : c.cells()) {
            if (x.difference() != null) {
                cells.put(List.copyOf(x.key().values()), new Entry(x.difference(), String.format(Locale.ROOT,
                        "%+.2f%s", x.difference(), x.regression() ? " !" : ""), x.regression()));
            }
        }
        return draw(c.dimensions(), cells, true, c.b().runId() + " - " + c.a().runId() + ": success rate difference, "
                + c.regressions().size() + " regression(s) outlined (BH q=" + c.q() + ")");
    }

    private static BufferedImage draw(List<String> dims, Map<List<String>, Entry> cells, boolean diverging,
            String title) {
        LinkedHashSet<String> cols = new LinkedHashSet<>();
        LinkedHashSet<List<String>> rows = new LinkedHashSet<>();
        for (List<String> k : cells.keySet()) {
            cols.add(k.get(k.size() - 1));
            rows.add(k.subList(0, k.size() - 1));
        }
        List<String> colList = new ArrayList<>(cols);
        colList.sort(null);
        List<List<String>> rowList = new ArrayList<>(rows);
        rowList.sort(EvalCube::compareKeys);
        int cw = 110;
        int ch = 28;
        Font font = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
        BufferedImage probe = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB);
        Graphics2D pg = probe.createGraphics();
        FontMetrics fm = pg.getFontMetrics(font);
        int labelW = 60;
        for (List<String> r : rowList) {
            labelW = Math.max(labelW, fm.stringWidth(String.join(" / ", r)) + 16);
        }
        labelW = Math.max(labelW, fm.stringWidth(String.join(" / ", dims.subList(0, dims.size() - 1))) + 16);
        pg.dispose();
        int top = 56;
        int w = Math.max(labelW + cw * colList.size() + 10, fm.stringWidth(title) + 20);
        int h = top + ch * Math.max(1, rowList.size()) + 10;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setFont(font);
        g.setColor(Color.BLACK);
        g.drawString(title, 10, 18);
        g.drawString(String.join(" / ", dims.subList(0, dims.size() - 1)) + "  \\  " + dims.get(dims.size() - 1), 10,
                top - 8);
        for (int j = 0; j < colList.size(); j++) {
            g.drawString(colList.get(j), labelW + j * cw + 4, top - 22);
        }
        for (int i = 0; i < rowList.size(); i++) {
            int y = top + i * ch;
            g.setColor(Color.BLACK);
            g.drawString(rowList.get(i).isEmpty() ? "all" : String.join(" / ", rowList.get(i)), 8, y + ch / 2 + 5);
            for (int j = 0; j < colList.size(); j++) {
                List<String> key = new ArrayList<>(rowList.get(i));
                key.add(colList.get(j));
                Entry e = cells.get(key);
                int x = labelW + j * cw;
                g.setColor(e == null ? new Color(220, 220, 220) : diverging ? diverging(e.value()) : sequential(e.value()));
                g.fillRect(x, y, cw - 2, ch - 2);
                if (e != null) {
                    g.setColor(Color.BLACK);
                    g.drawString(e.text(), x + 6, y + ch / 2 + 5);
                    if (e.outlined()) {
                        g.setStroke(new BasicStroke(3));
                        g.drawRect(x + 1, y + 1, cw - 4, ch - 4);
                        g.setStroke(new BasicStroke(1));
                    }
                }
            }
        }
        g.dispose();
        return img;
    }

    private static Color sequential(double v) {
        double t = Math.max(0, Math.min(1, v));
        return new Color((int) (230 - 130 * t), (int) (110 + 110 * t), (int) (100 + 20 * t));
    }

    private static Color diverging(double d) {
        double t = Math.max(-1, Math.min(1, d / 0.5));
        if (t < 0) {
            return new Color(255, (int) (255 + 155 * t), (int) (255 + 155 * t));
        }
        return new Color((int) (255 - 155 * t), (int) (255 - 100 * t), 255);
    }
}
