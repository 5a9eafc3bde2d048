package io.flywheel.curate.map;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetEpisode;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.EmbeddingModel;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;

/**
 * The embedding map: the 2-D projection of episode embeddings by {@link Pca} (the first two
 * principal components of the centred vectors), with each episode's scene, whether it failed
 * (outcome starting with {@code failure}) and whether mining put it into a training set.
 *
 * <p>Read from a lake with {@link #read(Lake, Options)}: the vectors of one embedding model (its
 * {@code episodes.emb_<key>} column, through the lake's typed vector read; the lake's default model, the one
 * registered last, unless {@link Options#model()} names one) and the columns {@code episode_id}, {@code scene},
 * {@code outcome} of {@code episodes}, and at most {@link Options#maxPoints()} episodes are kept (every
 * k-th one in table order, k = ceil(count / maxPoints)), so a lake of any size is read in bounded
 * memory. A lake without an embedding model, or whose model has no vector yet, gives a map with no points and
 * {@link #enriched()} false.
 *
 * @param points one point per episode kept, in table order
 * @param model the embedding model id (null when unknown)
 * @param dimension the embedding dimension d (0 when there are no points)
 * @param explained share of the total variance along PC1 and PC2, each in [0, 1]
 * @param episodesWithEmbedding episodes of the table with an embedding
 * @param episodesTotal episodes in the table
 * @param sampleStride every k-th embedded episode was kept (1: all)
 * @param minedFrom the training-set tag whose mined episodes are marked, or null
 * @param enriched whether the model's column holds at least one vector
 */
public record EmbeddingMap(List<Point> points, String model, int dimension, double[] explained,
                           long episodesWithEmbedding, long episodesTotal, long sampleStride, String minedFrom,
                           boolean enriched) {
    public EmbeddingMap {
        points = List.copyOf(points);
        explained = explained.clone();
    }

    /**
     * One episode on the map.
     *
     * @param episodeId the episode
     * @param scene its scene ("" when unknown)
     * @param outcome its outcome ("" when unknown)
     * @param failure whether the outcome starts with {@code failure}
     * @param mined whether mining put it into the marked training set
     * @param x coordinate on PC1 (embedding units: for L2-normalised embeddings within [-2, 2])
     * @param y coordinate on PC2
     */
    public record Point(String episodeId, String scene, String outcome, boolean failure, boolean mined, double x,
                        double y) {
        public Point {
            Objects.requireNonNull(episodeId, "episodeId");
            scene = scene == null ? "" : scene;
            outcome = outcome == null ? "" : outcome;
        }

        /** @return the point as JSON-ready fields: episode_id, scene, outcome, failure, mined, x, y */
        public java.util.Map<String, Object> fields() {
            java.util.Map<String, Object> q = new java.util.LinkedHashMap<>();
            q.put("episode_id", episodeId);
            q.put("scene", scene);
            q.put("outcome", outcome);
            q.put("failure", failure);
            q.put("mined", mined);
            q.put("x", x);
            q.put("y", y);
            return q;
        }
    }

    /**
     * An episode's embedding and labels, the input of {@link #of}.
     *
     * @param episodeId the episode
     * @param scene scene ("" when unknown)
     * @param outcome outcome ("" when unknown)
     * @param embedding float32[d]
     */
    public record Input(String episodeId, String scene, String outcome, float[] embedding) {
        public Input {
            Objects.requireNonNull(episodeId, "episodeId");
            Objects.requireNonNull(embedding, "embedding");
            scene = scene == null ? "" : scene;
            outcome = outcome == null ? "" : outcome;
        }
    }

    /**
     * Options of {@link #read}. Build with {@link #builder()}.
     *
     * @param maxPoints most episodes drawn, &ge; 1
     * @param trainsetTag training set whose mined episodes are marked; null for the newest set
     *     (none when the lake has no training set)
     * @param model the embedding model whose vectors are drawn, or null for the lake's default
     */
    public record Options(int maxPoints, String trainsetTag, String model) {
        public Options {
            if (maxPoints < 1) {
                throw new IllegalArgumentException("max points must be >= 1, got " + maxPoints);
            }
        }

        /** @return 20,000 points, the newest training set */
        public static Options defaults() {
            return new Options(20_000, null, null);
        }

        /** @return a builder starting from {@link #defaults()} */
        public static Builder builder() {
            return new Builder();
        }

        /** Builder of {@link Options}. */
        public static final class Builder {
            private int maxPoints = 20_000;
            private String trainsetTag;
            private String model;

            public Builder maxPoints(int n) {
                this.maxPoints = n;
                return this;
            }

            public Builder trainsetTag(String tag) {
                this.trainsetTag = tag;
                return this;
            }

            /** @param id the embedding model id, or null for the lake's default */
            public Builder model(String id) {
                this.model = id;
                return this;
            }

            public Options build() {
                return new Options(maxPoints, trainsetTag, model);
            }
        }
    }

    /** @return share of the total variance along PC1 */
    public double explainedPc1() {
        return explained.length > 0 ? explained[0] : 0;
    }

    /** @return share of the total variance along PC2 */
    public double explainedPc2() {
        return explained.length > 1 ? explained[1] : 0;
    }

    /**
     * Projects embeddings to 2-D.
     *
     * @param inputs episodes with embeddings, all of one dimension
     * @param mined episode ids to mark as mined
     * @param model model id, or null
     * @return the map (episode counts = inputs.size(), stride 1)
     * @throws IllegalArgumentException when the embeddings differ in dimension or hold a non-finite value
     *     (naming the episode)
     */
    public static EmbeddingMap of(List<Input> inputs, Set<String> mined, String model) {
        return project(inputs, mined, model, inputs.size(), inputs.size(), 1, null);
    }

    private static EmbeddingMap project(List<Input> inputs, Set<String> mined, String model, long withEmbedding,
                                        long total, long stride, String minedFrom) {
        float[][] v = new float[inputs.size()][];
        for (int i = 0; i < v.length; i++) {
            v[i] = inputs.get(i).embedding();
            if (v[i].length != v[0].length) {
                throw new IllegalArgumentException("episode " + inputs.get(i).episodeId() + " has a " + v[i].length
                        + "-d embedding, episode " + inputs.get(0).episodeId() + " a " + v[0].length + "-d one");
            }
        }
        Pca.Projection p;
        try {
            p = Pca.fit(v, 2);
        } catch (IllegalArgumentException e) {
            String m = e.getMessage();
            java.util.regex.Matcher mm = java.util.regex.Pattern.compile("^vector (\\d+)").matcher(m);
            throw new IllegalArgumentException(mm.find() ? "episode " + inputs.get(Integer.parseInt(mm.group(1)))
                    .episodeId() + ": embedding" + m.substring(mm.end()) : m, e);
        }
        List<Point> pts = new ArrayList<>(inputs.size());
        for (int i = 0; i < v.length; i++) {
            Input in = inputs.get(i);
            pts.add(new Point(in.episodeId(), in.scene(), in.outcome(), in.outcome().startsWith("failure"),
                    mined.contains(in.episodeId()), p.coordinates()[i][0], p.coordinates()[i][1]));
        }
        return new EmbeddingMap(pts, model, v.length == 0 ? 0 : v[0].length, new double[] {p.explained(0), p.explained(1)},
                withEmbedding, total, stride, minedFrom, withEmbedding > 0);
    }

    /**
     * Reads the map of a lake's episodes (see the class comment for what is read).
     *
     * @param lake an open lake
     * @param options point cap and training set
     * @return the map; no points and {@code enriched() == false} when no episode has an embedding yet
     * @throws IllegalArgumentException when {@code options.trainsetTag()} names no training set, or the
     *     embeddings differ in dimension
     * @throws io.flywheel.error.StorageUnavailableException when the lake cannot be read
     */
    public static EmbeddingMap read(Lake lake, Options options) {
        Set<String> mined = new HashSet<>();
        String from = null;
        List<Trainset> sets = Trainsets.list(lake);
        Trainset set = null;
        if (options.trainsetTag() != null) {
            set = Trainsets.open(lake, options.trainsetTag());
        } else if (!sets.isEmpty()) {
            set = sets.get(sets.size() - 1);
        }
        if (set != null) {
            from = set.tag();
            for (TrainsetEpisode e : Trainsets.episodes(lake, set)) {
                if (!e.minedBy().isEmpty()) {
                    mined.add(e.info().episodeId());
                }
            }
        }
        try (LakeTable t = lake.table("episodes")) {
            long total = t.countRows();
            if (lake.models().isEmpty() && options.model() == null) {
                return new EmbeddingMap(List.of(), null, 0, new double[2], 0, total, 1, from, false);
            }
            EmbeddingModel m = lake.models().resolve(options.model(), lake.location());
            if (!t.hasColumn(m.column())) {
                return new EmbeddingMap(List.of(), m.id(), 0, new double[2], 0, total, 1, from, false);
            }
            long with = t.countRows(m.column() + " IS NOT NULL");
            long stride = Math.max(1, (with + options.maxPoints() - 1) / options.maxPoints());
            Map<String, String[]> labels = new HashMap<>();
            boolean stream = t.hasColumn(io.flywheel.lake.TableSchemas.STREAM_OUTCOME);
            List<String> cols = stream ? List.of("episode_id", "scene", "outcome", io.flywheel.lake.TableSchemas.STREAM_OUTCOME)
                    : List.of("episode_id", "scene", "outcome");
            t.scan(ScanRequest.builder().columns(cols).build(), b -> {
                ColumnView id = b.column("episode_id");
                ColumnView scene = b.column("scene");
                ColumnView outcome = b.column("outcome");
                ColumnView so = stream ? b.column(io.flywheel.lake.TableSchemas.STREAM_OUTCOME) : null;
                for (int i = 0; i < b.rowCount(); i++) {
                    String effective = io.flywheel.rows.EpisodeRow.effectiveOutcome(str(outcome, i),
                            so == null ? null : so.getString(i));
                    labels.put(str(id, i), new String[] {str(scene, i), effective == null ? "" : effective});
                }
            });
            List<Input> inputs = new ArrayList<>();
            long[] seen = {0};
            t.scanVectors(m.column(), "episode_id", null, (id, v) -> {
                if (seen[0]++ % stride == 0) {
                    String[] l = labels.getOrDefault(id, new String[] {"", ""});
                    inputs.add(new Input(id, l[0], l[1], v));
                }
            });
            return project(inputs, mined, m.id(), with, total, stride, from);
        }
    }

    private static String str(ColumnView v, int i) {
        String s = v.isNull(i) ? null : v.getString(i);
        return s == null ? "" : s;
    }

    // ------------------------------------------------------------------ drawing

    /** Scene colours (Tableau 10), by scene in sorted order; scenes past the tenth share grey. */
    static final Color[] PALETTE = {new Color(0x4e79a7), new Color(0xf28e2b), new Color(0x59a14f),
        new Color(0xb07aa1), new Color(0x76b7b2), new Color(0xedc948), new Color(0x9c755f), new Color(0xff9da7),
        new Color(0x86bcb6), new Color(0xbab0ac)};
    static final Color OTHER = new Color(0x999999);
    static final Color FAILURE = new Color(0xd62728);

    /** @return scene to colour index (sorted scenes; past the palette: -1) */
    public Map<String, Integer> sceneColours() {
        Map<String, Integer> out = new LinkedHashMap<>();
        int i = 0;
        for (String s : new java.util.TreeSet<>(points.stream().map(Point::scene).toList())) {
            out.put(s, i < PALETTE.length ? i : -1);
            i++;
        }
        return out;
    }

    /** @return the scene's colour as {@code #rrggbb} (grey past the tenth scene) */
    public String sceneColour(String scene) {
        Integer i = sceneColours().get(scene);
        Color c = i == null || i < 0 ? OTHER : PALETTE[i];
        return String.format(Locale.ROOT, "#%06x", c.getRGB() & 0xffffff);
    }

    /** Plot geometry shared by the renderer and its tests: data to pixel coordinates. */
    record Frame(double minX, double maxX, double minY, double maxY, int left, int top, int width, int height) {
        int px(double x) {
            return left + (int) Math.round((x - minX) / (maxX - minX) * width);
        }

        int py(double y) {
            return top + height - (int) Math.round((y - minY) / (maxY - minY) * height);
        }
    }

    static final int IMG_W = 960;
    static final int IMG_H = 720;

    Frame frame() {
        double minX = -1, maxX = 1, minY = -1, maxY = 1;
        if (!points.isEmpty()) {
            minX = points.stream().mapToDouble(Point::x).min().orElse(0);
            maxX = points.stream().mapToDouble(Point::x).max().orElse(0);
            minY = points.stream().mapToDouble(Point::y).min().orElse(0);
            maxY = points.stream().mapToDouble(Point::y).max().orElse(0);
            double padX = Math.max(1e-9, (maxX - minX) * 0.05);
            double padY = Math.max(1e-9, (maxY - minY) * 0.05);
            minX -= padX;
            maxX += padX;
            minY -= padY;
            maxY += padY;
        }
        return new Frame(minX, maxX, minY, maxY, 60, 60, 640, 600);
    }

    /**
     * Draws the map: points coloured by scene, failures as a red cross over the point, mined episodes
     * with a black ring; axes labelled with the explained variance; a legend on the right.
     *
     * @return a 960x720 RGB image
     */
    public BufferedImage render() {
        BufferedImage img = new BufferedImage(IMG_W, IMG_H, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, IMG_W, IMG_H);
            Frame f = frame();
            g.setColor(new Color(0xdddddd));
            g.drawRect(f.left(), f.top(), f.width(), f.height());
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(String.format(Locale.ROOT, "Episode embeddings, PCA: %d of %d episodes%s", points.size(),
                    episodesTotal, model == null ? "" : " (" + model + ")"), 12, 24);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            if (points.isEmpty()) {
                g.drawString(enriched ? "no points" : "not enriched yet: no episode has an embedding (run flywheel enrich)",
                        f.left() + 20, f.top() + 30);
            }
            g.drawString(String.format(Locale.ROOT, "PC1 (%.1f%% of variance)", 100 * explainedPc1()),
                    f.left() + f.width() / 2 - 60, f.top() + f.height() + 30);
            java.awt.geom.AffineTransform old = g.getTransform();
            g.rotate(-Math.PI / 2);
            g.drawString(String.format(Locale.ROOT, "PC2 (%.1f%% of variance)", 100 * explainedPc2()),
                    -(f.top() + f.height() / 2 + 60), f.left() - 12);
            g.setTransform(old);
            Map<String, Integer> colours = sceneColours();
            for (Point p : points) {
                Integer ci = colours.get(p.scene());
                g.setColor(ci == null || ci < 0 ? OTHER : PALETTE[ci]);
                g.fill(new Ellipse2D.Double(f.px(p.x()) - 4.5, f.py(p.y()) - 4.5, 9, 9));
            }
            g.setStroke(new BasicStroke(1.6f));
            for (Point p : points) {
                if (p.mined()) {
                    g.setColor(Color.BLACK);
                    g.draw(new Ellipse2D.Double(f.px(p.x()) - 7.5, f.py(p.y()) - 7.5, 15, 15));
                }
            }
            g.setStroke(new BasicStroke(2.2f));
            for (Point p : points) {
                if (p.failure()) {
                    int x = f.px(p.x());
                    int y = f.py(p.y());
                    g.setColor(FAILURE);
                    g.draw(new Line2D.Double(x - 7, y - 7, x + 7, y + 7));
                    g.draw(new Line2D.Double(x - 7, y + 7, x + 7, y - 7));
                }
            }
            int ly = f.top() + 10;
            int lx = f.left() + f.width() + 30;
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
            g.drawString("scene", lx, ly);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            for (Map.Entry<String, Integer> e : colours.entrySet()) {
                if (e.getValue() < 0) {
                    continue;
                }
                ly += 18;
                g.setColor(PALETTE[e.getValue()]);
                g.fill(new Ellipse2D.Double(lx, ly - 9, 9, 9));
                g.setColor(Color.BLACK);
                String s = e.getKey().isEmpty() ? "(unknown)" : e.getKey();
                g.drawString(s.length() > 28 ? s.substring(0, 27) + "..." : s, lx + 16, ly);
            }
            if (colours.values().stream().anyMatch(v -> v < 0)) {
                ly += 18;
                g.setColor(OTHER);
                g.fill(new Ellipse2D.Double(lx, ly - 9, 9, 9));
                g.setColor(Color.BLACK);
                g.drawString("other scenes", lx + 16, ly);
            }
            ly += 30;
            g.setColor(FAILURE);
            g.setStroke(new BasicStroke(2.2f));
            g.draw(new Line2D.Double(lx, ly - 9, lx + 9, ly));
            g.draw(new Line2D.Double(lx, ly, lx + 9, ly - 9));
            g.setColor(Color.BLACK);
            long failures = points.stream().filter(Point::failure).count();
            g.drawString("failure (" + failures + ")", lx + 16, ly);
            ly += 20;
            g.setStroke(new BasicStroke(1.6f));
            g.draw(new Ellipse2D.Double(lx - 2, ly - 11, 13, 13));
            long minedCount = points.stream().filter(Point::mined).count();
            g.drawString("mined" + (minedFrom == null ? "" : " into " + minedFrom) + " (" + minedCount + ")", lx + 16, ly);
        } finally {
            g.dispose();
        }
        return img;
    }

    /**
     * Writes {@link #render()} as a PNG.
     *
     * @param out the file (parent folders are created)
     * @throws IOException when it cannot be written
     */
    public void writePng(Path out) throws IOException {
        io.flywheel.plot.Png.write(render(), out);
    }
}
