package io.flywheel.curate.pool;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import javax.imageio.ImageIO;

import io.flywheel.curate.DedupSweep;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;

/**
 * The dedup threshold sweep with its contact sheet: for each threshold, the group count and the
 * pool size left, and the pairs merged just inside it (above the previous threshold), shown side
 * by side (master-camera hot copies: the middle frame of each episode, or the frames themselves)
 * in {@code sweep.html} and a grid of pairs in {@code sweep.png} ({@value #PAIRS_PER_PAGE} pairs a page, further
 * pages {@code sweep-2.png}, ...), so that a person can see where merging starts to join different scenes.
 */
public final class ContactSheet {
    private static final int THUMB = 96;
    /** Grid columns of a PNG page. */
    static final int COLUMNS = 4;
    /** Pairs on one PNG page: {@value #COLUMNS} columns by 6 rows, about 1,150 x 1,000 px. */
    static final int PAIRS_PER_PAGE = COLUMNS * 6;
    private static final int CELL_W = 2 * (THUMB * 4 / 3) + 26;
    private static final int CELL_H = THUMB + 62;

    private ContactSheet() {}

    /**
     * @param episodes sweep over episode embeddings
     * @param frames sweep over master-camera pHashes
     * @param html the HTML contact sheet
     * @param pngs the PNG contact sheet's pages, {@code sweep.png} first (one page when no pair merged)
     */
    public record Report(List<DedupSweep.Step> episodes, List<DedupSweep.Step> frames, Path html, List<Path> pngs) {
        public Report {
            pngs = List.copyOf(pngs);
        }
    }

    private record FrameKey(String episodeId, int frameIndex) {}

    private record Row(String kind, double threshold, FrameKey a, FrameKey b, String labelA, String labelB,
                       float distance) {}

    /**
     * @throws IllegalArgumentException when the lake has no embeddings
     * @throws IOException when the output cannot be written
     */
    public static Report sweep(Lake lake, double[] episodeThresholds, int[] frameThresholds, int pairs, Path outDir)
            throws IOException {
        EpisodeVectors ev = EpisodeVectors.read(lake);
        List<DedupSweep.Step> es = DedupSweep.embeddings(ev.vectors(), episodeThresholds,
                DedupJob.episodePriority(ev.infos()), pairs);
        DedupJob.MasterFrames mf = DedupJob.MasterFrames.read(lake);
        List<DedupSweep.Step> fs = mf.size() == 0 ? List.of()
                : DedupSweep.phash(mf.phash(), frameThresholds, mf.sharpness(), pairs);
        Map<String, Integer> middle = middleFrames(lake);
        List<Row> rows = new ArrayList<>();
        for (DedupSweep.Step s : es) {
            for (DedupSweep.MergedPair p : s.justInside()) {
                String a = ev.infos().get(p.representative()).episodeId();
                String b = ev.infos().get(p.member()).episodeId();
                rows.add(new Row("episodes", s.threshold(), new FrameKey(a, middle.getOrDefault(a, 0)),
                        new FrameKey(b, middle.getOrDefault(b, 0)), label(ev, p.representative()), label(ev, p.member()),
                        p.distance()));
            }
        }
        for (DedupSweep.Step s : fs) {
            for (DedupSweep.MergedPair p : s.justInside()) {
                FrameKey a = new FrameKey(mf.episode()[p.representative()], mf.frameIndex()[p.representative()]);
                FrameKey b = new FrameKey(mf.episode()[p.member()], mf.frameIndex()[p.member()]);
                rows.add(new Row("frames", s.threshold(), a, b, a.episodeId() + " #" + a.frameIndex(),
                        b.episodeId() + " #" + b.frameIndex(), p.distance()));
            }
        }
        Set<FrameKey> keys = new HashSet<>();
        rows.forEach(r -> {
            keys.add(r.a());
            keys.add(r.b());
        });
        Map<FrameKey, byte[]> thumbs = thumbnails(lake, keys);
        Files.createDirectories(outDir);
        Path html = outDir.resolve("sweep.html");
        Files.writeString(html, html(es, fs, rows, thumbs), StandardCharsets.UTF_8);
        int pages = Math.max(1, (rows.size() + PAIRS_PER_PAGE - 1) / PAIRS_PER_PAGE);
        List<Path> pngs = new ArrayList<>();
        for (int page = 0; page < pages; page++) {
            Path png = outDir.resolve(page == 0 ? "sweep.png" : "sweep-" + (page + 1) + ".png");
            List<Row> on = rows.subList(page * PAIRS_PER_PAGE, Math.min(rows.size(), (page + 1) * PAIRS_PER_PAGE));
            io.flywheel.plot.Png.write(png(on, thumbs, page + 1, pages), png);
            pngs.add(png);
        }
        for (int page = pages + 1; Files.deleteIfExists(outDir.resolve("sweep-" + page + ".png")); page++) {
            // pages an earlier, longer sweep left here
        }
        return new Report(es, fs, html, pngs);
    }

    private static String label(EpisodeVectors ev, int i) {
        var e = ev.infos().get(i);
        return e.episodeId() + (e.scene().isEmpty() ? "" : " · " + e.scene()) + (e.object().isEmpty() ? "" : " · " + e.object());
    }

    /** @return per episode, the frame index in the middle of its frames */
    private static Map<String, Integer> middleFrames(Lake lake) {
        Map<String, Integer> out = new HashMap<>();
        try (LakeTable t = lake.table("episodes")) {
            t.scan(ScanRequest.builder().columns("episode_id", "frame_count").build(), b -> {
                ColumnView id = b.column("episode_id");
                ColumnView fc = b.column("frame_count");
                for (int i = 0; i < b.rowCount(); i++) {
                    long n = fc.isNull(i) ? 0 : fc.getLong(i);
                    out.put(DedupJob.text(id, i), (int) (n / 2));
                }
            });
        }
        return out;
    }

    /** @return the first camera's hot copy (JPEG) of each frame asked for, where enrich wrote one */
    private static Map<FrameKey, byte[]> thumbnails(Lake lake, Set<FrameKey> keys) {
        Map<FrameKey, byte[]> out = new HashMap<>();
        if (keys.isEmpty()) {
            return out;
        }
        List<String> eps = keys.stream().map(FrameKey::episodeId).distinct().sorted().toList();
        try (LakeTable t = lake.table("frames")) {
            t.scan(ScanRequest.builder().columns("episode_id", "frame_index", "images").filter(Sql.in("episode_id", eps))
                    .build(), b -> {
                ColumnView images = b.column("images");
                ColumnView s = images.items();
                ColumnView hot = s.hasField("hot_jpeg") ? s.field("hot_jpeg") : null;
                ColumnView id = b.column("episode_id");
                ColumnView frame = b.column("frame_index");
                for (int r = 0; r < b.rowCount(); r++) {
                    FrameKey k = new FrameKey(DedupJob.text(id, r), frame.getInt(r));
                    int first = images.listStart(r);
                    if (keys.contains(k) && hot != null && images.listEnd(r) > first && !hot.isNull(first)) {
                        out.put(k, hot.getBytes(first));
                    }
                }
            });
        }
        return out;
    }

    private static String html(List<DedupSweep.Step> es, List<DedupSweep.Step> fs, List<Row> rows,
                               Map<FrameKey, byte[]> thumbs) {
        StringBuilder h = new StringBuilder("<!doctype html><meta charset=utf-8><title>Flywheel dedup sweep</title>"
                + "<style>body{font:14px sans-serif;margin:2em}td,th{padding:4px 8px;text-align:right}"
                + "img{height:" + THUMB + "px}.pair td{text-align:left}</style><h1>Dedup sweep</h1>");
        table(h, "Episodes (cosine distance of episode embeddings)", es);
        table(h, "Frames (Hamming distance of master-camera pHash, bits)", fs);
        h.append("<h2>Pairs merged just inside each threshold</h2><table class=pair>");
        for (Row r : rows) {
            h.append(String.format(Locale.ROOT, "<tr><td>%s &le; %s</td><td>%s</td><td>%s</td><td>distance %.4f<br>%s<br>%s</td></tr>",
                    r.kind(), fmt(r.threshold()), img(thumbs.get(r.a())), img(thumbs.get(r.b())), r.distance(),
                    esc(r.labelA()), esc(r.labelB())));
        }
        return h.append("</table>").toString();
    }

    private static void table(StringBuilder h, String title, List<DedupSweep.Step> steps) {
        h.append("<h2>").append(title).append("</h2><table><tr><th>threshold</th><th>items</th><th>groups = pool size</th>"
                + "<th>removed</th><th>pairs newly merged</th></tr>");
        for (DedupSweep.Step s : steps) {
            h.append("<tr><td>").append(fmt(s.threshold())).append("</td><td>").append(s.items()).append("</td><td>")
                    .append(s.groups()).append("</td><td>").append(s.removed()).append("</td><td>")
                    .append(s.justInsideTotal()).append("</td></tr>");
        }
        h.append("</table>");
    }

    private static String fmt(double t) {
        return t == Math.rint(t) ? Long.toString((long) t) : String.format(Locale.ROOT, "%.4f", t);
    }

    private static String img(byte[] jpeg) {
        return jpeg == null ? "(no hot copy)" : "<img src=\"data:image/jpeg;base64," + Base64.getEncoder().encodeToString(jpeg) + "\">";
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    /** One page: a title line, then the pairs in a grid, row by row; each cell two thumbnails over three lines. */
    private static BufferedImage png(List<Row> rows, Map<FrameKey, byte[]> thumbs, int page, int pages)
            throws IOException {
        int gridRows = Math.max(1, (rows.size() + COLUMNS - 1) / COLUMNS);
        BufferedImage img = new BufferedImage(COLUMNS * CELL_W + 8, gridRows * CELL_H + 30, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, img.getWidth(), img.getHeight());
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
            g.drawString(rows.isEmpty() ? "no pairs merged at these thresholds"
                    : "pairs merged just inside each threshold" + (pages > 1 ? " (page " + page + " of " + pages + ")" : ""),
                    8, 18);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            for (int i = 0; i < rows.size(); i++) {
                Row r = rows.get(i);
                int x0 = 8 + (i % COLUMNS) * CELL_W;
                int y = 26 + (i / COLUMNS) * CELL_H;
                int x = x0;
                for (FrameKey k : List.of(r.a(), r.b())) {
                    byte[] j = thumbs.get(k);
                    BufferedImage t = j == null ? null : ImageIO.read(new ByteArrayInputStream(j));
                    int tw = t == null ? THUMB : Math.min(THUMB * 4 / 3, t.getWidth() * THUMB / Math.max(1, t.getHeight()));
                    if (t != null) {
                        g.drawImage(t, x, y, tw, THUMB, null);
                    } else {
                        g.drawRect(x, y, tw, THUMB);
                    }
                    x += tw + 6;
                }
                g.setColor(Color.BLACK);
                g.drawString(String.format(Locale.ROOT, "%s <= %s: distance %.4f", r.kind(), fmt(r.threshold()),
                        r.distance()), x0, y + THUMB + 15);
                g.drawString(fit(g, r.labelA(), CELL_W - 10), x0, y + THUMB + 30);
                g.drawString(fit(g, r.labelB(), CELL_W - 10), x0, y + THUMB + 45);
            }
        } finally {
            g.dispose();
        }
        return img;
    }

    /** @return {@code s}, cut with an ellipsis to fit {@code width} pixels in the current font */
    private static String fit(Graphics2D g, String s, int width) {
        if (g.getFontMetrics().stringWidth(s) <= width) {
            return s;
        }
        int n = s.length();
        while (n > 1 && g.getFontMetrics().stringWidth(s.substring(0, n) + "…") > width) {
            n--;
        }
        return s.substring(0, n) + "…";
    }
}
