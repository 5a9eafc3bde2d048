package io.flywheel.console;

import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.regex.Pattern;

import javax.imageio.ImageIO;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.align.AlignMethod;
import io.flywheel.align.AlignOptions;
import io.flywheel.align.Aligner;
import io.flywheel.align.Alignment;
import io.flywheel.align.MissPolicy;
import io.flywheel.align.StreamAlignment;
import io.flywheel.align.StreamPolicy;
import io.flywheel.align.TopicStream;
import io.flywheel.curate.SourceFiles;
import io.flywheel.curate.align.ResidualDistribution;
import io.flywheel.curate.align.StreamReport;
import io.flywheel.curate.align.StreamResiduals;
import io.flywheel.curate.map.EmbeddingMap;
import io.flywheel.curate.pool.DedupTables;
import io.flywheel.curate.trainset.CompositionChart;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetDiff;
import io.flywheel.curate.trainset.TrainsetEpisode;
import io.flywheel.curate.trainset.TrainsetTables;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.RawLocator;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;

/**
 * What the console shows, as plain values for JSON (maps with snake_case keys, lists, numbers,
 * strings): the HTTP layer ({@link ConsoleServer}) only parses parameters and writes the results.
 * Every method reads the latest committed version of the tables it needs, with a column projection
 * and, for lists, a limit and offset, so no call reads a whole large lake. Columns a lake does not
 * have (before enrichment or dedup) are reported as absent ({@code "enriched": false}), not errors.
 *
 * <p>Files: the only files read are the raw files the lake's {@code raw_files} table registers
 * (images and alignment inputs are found through locators and episode metadata, never through a
 * path in a request). Thread-safe: every call opens its own table handles.
 */
public final class ConsoleApi {
    /** Most rows one page of episodes or frames may ask for. */
    public static final int MAX_PAGE = 1000;
    /** Episode ids, stream names and tags accepted in requests. */
    static final Pattern ID = Pattern.compile("[A-Za-z0-9._:@+-]{1,200}");
    static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._/~:@+-]{1,300}");

    /** Filters of the episodes table: request parameter to column. */
    public static final Map<String, String> FILTERS = orderedMap("robot", TableSchemas.ROBOT_ID, "task", TableSchemas.TASK,
            "scene", TableSchemas.SCENE, "operator", TableSchemas.OPERATOR, "outcome", TableSchemas.OUTCOME, "quality",
            TableSchemas.QUALITY_STATUS);
    /** Columns the episodes table can be sorted by (when present). */
    public static final List<String> SORTABLE = List.of(TableSchemas.EPISODE_ID, TableSchemas.ROBOT_ID, TableSchemas.TASK,
            TableSchemas.SCENE, TableSchemas.OUTCOME, TableSchemas.STREAM_OUTCOME, TableSchemas.DURATION_NS,
            TableSchemas.FRAME_COUNT, TableSchemas.QUALITY_STATUS, TableSchemas.START_NS, DedupTables.DUPLICATE_OF);
    private static final List<String> LIST_COLUMNS = List.of(TableSchemas.EPISODE_ID, TableSchemas.ROBOT_ID,
            TableSchemas.TASK, TableSchemas.SCENE, TableSchemas.OPERATOR, TableSchemas.OUTCOME,
            TableSchemas.STREAM_OUTCOME, TableSchemas.START_NS,
            TableSchemas.DURATION_NS, TableSchemas.FRAME_COUNT, TableSchemas.QUALITY_STATUS, TableSchemas.QUALITY_FLAGS,
            DedupTables.DUPLICATE_OF, TableSchemas.ENRICHED_AT_NS);

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Lake lake;
    private final int mapMaxPoints;
    private final Set<String> registeredRaw = ConcurrentHashMap.newKeySet();
    private final Map<String, EpisodeStreams> streamsCache = Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, EpisodeStreams> e) {
                    return size() > 8;
                }
            });
    private final Map<String, EmbeddingMap> mapCache = new ConcurrentHashMap<>();

    /**
     * @param lake an open lake; stays owned by the caller (close it after the console)
     * @param mapMaxPoints most episodes drawn on the embedding map
     */
    public ConsoleApi(Lake lake, int mapMaxPoints) {
        this.lake = lake;
        this.mapMaxPoints = mapMaxPoints;
    }

    /** @return the lake served */
    public Lake lake() {
        return lake;
    }

    // ------------------------------------------------------------------ summary

    /** @return lake location, table versions and row counts, and which optional columns exist */
    public Map<String, Object> summary() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("lake", lake.location());
        Map<String, Object> tables = new LinkedHashMap<>();
        for (String t : TableSchemas.CORE_TABLES) {
            try (LakeTable table = lake.table(t)) {
                tables.put(t, Map.of("version", table.version(), "rows", table.countRows()));
            }
        }
        m.put("tables", tables);
        Set<String> cols = episodeColumns();
        m.put("enriched", !lake.models().isEmpty());
        m.put("embedding_models", lake.models().all().stream().map(io.flywheel.lake.EmbeddingModel::id).toList());
        m.put("deduplicated", cols.contains(DedupTables.DUPLICATE_OF)
                || lake.hasTable(DedupTables.EPISODE_GROUPS));
        m.put("trainsets", Trainsets.list(lake).size());
        return m;
    }

    private Set<String> episodeColumns() {
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            return names(t);
        }
    }

    private static Set<String> names(LakeTable t) {
        return new TreeSet<>(t.columnNames());
    }

    // ------------------------------------------------------------------ fleet

    /**
     * The fleet: robots (token count, last heartbeat by the gateway's clock and its age in s, last battery values,
     * episodes, files landed by the gateway, ingested, failed and waiting, uploads in progress), the newest alerts
     * (by the robot's ts_ns), the uploads in progress (bytes staged of the declared size) and totals.
     *
     * @return {@code now_ns}, {@code local_staging} (false for an s3:// lake: no staging folder), {@code totals},
     *     {@code robots}, {@code alerts}, {@code uploads}
     */
    public Map<String, Object> fleet() {
        return FleetStatus.of(lake);
    }

    // ------------------------------------------------------------------ stream labels

    /**
     * The stream's labels as they arrive: the newest rows of {@code label_history} (by {@code labelled_at_ns}), each
     * with the lake episode it was applied to (the episode whose {@code stream_episode_id} and robot are the label's;
     * null while that episode is not ingested yet), and counts over every stream episode's current label.
     *
     * @param limit most rows listed, 1..{@value #MAX_PAGE}
     * @return {@code label_history} (false before the first label), {@code version} (the table's, -1 before),
     *     {@code total} (rows), {@code episodes} (stream episodes labelled), {@code applied} (lake episodes with a
     *     stream label), {@code by_label} (current labels per class), {@code rules_versions}, {@code newest_ns}
     *     (the newest labelled_at_ns, null before), {@code labels} (newest first: episode_id, robot_id, label, rule,
     *     rules_version, labelled_at_ns, consumer_group, checkpoint_id, lake_episode_id)
     */
    public Map<String, Object> labels(int limit) {
        Map<String, Object> m = new LinkedHashMap<>();
        boolean has = lake.hasTable(io.flywheel.lake.StreamTables.LABEL_HISTORY);
        m.put("label_history", has);
        List<io.flywheel.rows.LabelHistoryRow> rows = new ArrayList<>();
        long version = -1;
        if (has) {
            try (LakeTable t = lake.table(io.flywheel.lake.StreamTables.LABEL_HISTORY)) {
                version = t.version();
                rows.addAll(t.rows(io.flywheel.lake.StreamTables.LABEL_HISTORY_TABLE, io.flywheel.lake.ScanRequest.all()));
            }
        }
        Map<String, String> applied = new java.util.HashMap<>();
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            if (t.hasColumn(TableSchemas.STREAM_EPISODE_ID)) {
                t.scan(io.flywheel.lake.ScanRequest.builder().columns(TableSchemas.EPISODE_ID, TableSchemas.ROBOT_ID,
                        TableSchemas.STREAM_EPISODE_ID).filter(TableSchemas.STREAM_EPISODE_ID + " IS NOT NULL").build(), b -> {
                            for (int i = 0; i < b.rowCount(); i++) {
                                applied.put(b.column(TableSchemas.ROBOT_ID).getString(i) + "\u0000"
                                        + b.column(TableSchemas.STREAM_EPISODE_ID).getString(i),
                                        b.column(TableSchemas.EPISODE_ID).getString(i));
                            }
                        });
            }
        }
        Map<String, io.flywheel.rows.LabelHistoryRow> current = new LinkedHashMap<>();
        for (io.flywheel.rows.LabelHistoryRow r : rows) {
            current.merge(r.robotId() + "\u0000" + r.episodeId(), r, (a, b) -> b.labelledAtNs() >= a.labelledAtNs() ? b : a);
        }
        Map<String, Integer> byLabel = new TreeMap<>();
        Set<String> versions = new TreeSet<>();
        current.values().forEach(r -> {
            byLabel.merge(r.label(), 1, Integer::sum);
            versions.add(r.rulesVersion());
        });
        List<io.flywheel.rows.LabelHistoryRow> newest = new ArrayList<>(rows);
        newest.sort(java.util.Comparator.comparingLong(io.flywheel.rows.LabelHistoryRow::labelledAtNs).reversed()
                .thenComparing(io.flywheel.rows.LabelHistoryRow::episodeId));
        List<Map<String, Object>> out = new ArrayList<>();
        for (io.flywheel.rows.LabelHistoryRow r : newest.subList(0, Math.min(limit, newest.size()))) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("episode_id", r.episodeId());
            x.put("robot_id", r.robotId());
            x.put("label", r.label());
            x.put("rule", r.rule());
            x.put("rules_version", r.rulesVersion());
            x.put("labelled_at_ns", r.labelledAtNs());
            x.put("consumer_group", r.consumerGroup());
            x.put("checkpoint_id", r.checkpointId());
            x.put("lake_episode_id", applied.get(r.robotId() + "\u0000" + r.episodeId()));
            out.add(x);
        }
        m.put("version", version);
        m.put("total", rows.size());
        m.put("episodes", current.size());
        m.put("applied", applied.size());
        m.put("by_label", byLabel);
        m.put("rules_versions", List.copyOf(versions));
        m.put("newest_ns", newest.isEmpty() ? null : newest.get(0).labelledAtNs());
        m.put("labels", out);
        return m;
    }

    // ------------------------------------------------------------------ episodes

    /**
     * One page of episodes, filtered and sorted by Lance (an ordered scan with limit and offset over
     * the listed columns only).
     *
     * @param q the page: offset, limit (1..{@value #MAX_PAGE}), sort column and direction, filters
     * @return {@code total} (rows matching the filters), {@code offset}, {@code limit}, {@code sort},
     *     {@code order}, {@code columns}, {@code rows} (one map per episode: the listed columns it has)
     * @throws ApiException 400 for an unknown sort column or a bad limit/offset
     */
    public Map<String, Object> episodes(EpisodeQuery q) {
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            Set<String> have = names(t);
            String sort = q.sort() == null ? TableSchemas.EPISODE_ID : q.sort();
            if (!SORTABLE.contains(sort) || !have.contains(sort)) {
                throw ApiException.badRequest("sort: unknown column '" + sort + "'; expected one of "
                        + SORTABLE.stream().filter(have::contains).toList());
            }
            String filter = q.sqlFilter();
            List<String> cols = LIST_COLUMNS.stream().filter(have::contains).toList();
            long total = filter == null ? t.countRows() : t.countRows(filter);
            List<Map<String, Object>> rows = new ArrayList<>();
            ScanRequest.Builder page = ScanRequest.builder().columns(cols).limit(q.limit()).offset(q.offset())
                    .orderBy(q.descending() ? ScanRequest.SortKey.desc(sort) : ScanRequest.SortKey.asc(sort));
            if (!sort.equals(TableSchemas.EPISODE_ID)) { // a stable order among equal values
                page.orderBy(ScanRequest.SortKey.asc(TableSchemas.EPISODE_ID));
            }
            if (filter != null) {
                page.filter(filter);
            }
            if (q.offset() < total) {
                t.scan(page.build(), b -> {
                    for (int i = 0; i < b.rowCount(); i++) {
                        rows.add(RowJson.row(b, i));
                    }
                });
            }
            if (!have.contains(DedupTables.DUPLICATE_OF) && lake.hasTable(DedupTables.EPISODE_GROUPS)) {
                // the latest dedup keeps its groups in episode_groups: look up this page's episodes only
                Map<String, String> reps = DedupTables.representatives(lake,
                        rows.stream().map(r -> String.valueOf(r.get(TableSchemas.EPISODE_ID))).toList());
                for (Map<String, Object> r : rows) { // null for an episode that is no other's duplicate
                    String id = String.valueOf(r.get(TableSchemas.EPISODE_ID));
                    String rep = reps.get(id);
                    r.put(DedupTables.DUPLICATE_OF, id.equals(rep) ? null : rep);
                }
                cols = new ArrayList<>(cols);
                cols.add(DedupTables.DUPLICATE_OF);
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("total", total);
            m.put("offset", q.offset());
            m.put("limit", q.limit());
            m.put("sort", sort);
            m.put("order", q.descending() ? "desc" : "asc");
            m.put("filters", q.filters());
            m.put("columns", cols);
            m.put("rows", rows);
            return m;
        }
    }

    /**
     * One episode: every column but the embedding models' (their ids under {@code embedding_models}, the lake's
     * default model under {@code embedding_model} when it embedded the episode), the QC results and metrics parsed from
     * {@code quality_metrics}, the metadata parsed, the cameras and streams (from its first frame), and
     * per-stream residual statistics over all its frames.
     *
     * @throws ApiException 404 when there is no such episode
     */
    public Map<String, Object> episode(String id) {
        Map<String, Object> m;
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            io.flywheel.lake.EmbeddingModels models = lake.models();
            List<String> modelColumns = new ArrayList<>();
            for (io.flywheel.lake.EmbeddingModel em : models.all()) {
                modelColumns.add(em.column());
                modelColumns.add(em.embeddedAtColumn());
            }
            List<String> all = t.columnNames();
            List<String> cols = all.stream().filter(c -> !modelColumns.contains(c)).toList();
            List<Map<String, Object>> rows = new ArrayList<>();
            t.scan(ScanRequest.builder().columns(cols).filter(episodeFilter(id)).limit(1).build(),
                    b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            rows.add(RowJson.row(b, i));
                        }
                    });
            if (rows.isEmpty()) {
                throw ApiException.notFound("no episode '" + id + "' in " + lake.location());
            }
            m = rows.get(0);
            boolean hasEmb = cols.size() < all.size();
            List<String> embeddedBy = new ArrayList<>();
            for (io.flywheel.lake.EmbeddingModel em : models.all()) {
                if (all.contains(em.embeddedAtColumn())
                        && t.countRows(episodeFilter(id) + " AND " + em.embeddedAtColumn()
                                + " IS NOT NULL") > 0) {
                    embeddedBy.add(em.id());
                }
            }
            m.put("embedding_models", embeddedBy);
            if (!models.isEmpty()) {
                String dflt = models.resolve(null, lake.location()).id();
                m.put("embedding_model", embeddedBy.contains(dflt) ? dflt : null);
            }
            m.put("enriched", m.get(TableSchemas.ENRICHED_AT_NS) != null);
            Object stream = m.get(TableSchemas.STREAM_OUTCOME);
            Object recorded = m.get(TableSchemas.OUTCOME);
            m.put("effective_outcome", io.flywheel.rows.EpisodeRow.effectiveOutcome(
                    recorded == null ? null : recorded.toString(), stream == null ? null : stream.toString()));
            m.put("outcome_source", stream != null ? io.flywheel.rows.EpisodeRow.SOURCE_STREAM
                    : io.flywheel.rows.EpisodeRow.SOURCE_RECORDING);
            m.put("enrichment_columns", hasEmb || m.containsKey(TableSchemas.ENRICHED_AT_NS));
        }
        Object qm = m.remove(TableSchemas.QUALITY_METRICS);
        Map<String, Object> quality = parse(qm);
        m.put("quality_results", quality.getOrDefault("results", List.of()));
        m.put("quality_metrics", quality.getOrDefault("metrics", Map.of()));
        m.put(TableSchemas.METADATA, parse(m.get(TableSchemas.METADATA)));
        // cameras and per-stream residuals from the frames table (two projected scans of this episode)
        List<Map<String, Object>> cameras = new ArrayList<>();
        try (LakeTable f = lake.table(TableSchemas.FRAMES)) {
            f.scan(ScanRequest.builder().columns(TableSchemas.FRAME_INDEX, TableSchemas.IMAGES)
                    .filter(episodeFilter(id) + " AND " + TableSchemas.FRAME_INDEX + " = 0")
                    .limit(1).build(), b -> {
                        if (b.rowCount() > 0) {
                            ColumnView images = b.column(TableSchemas.IMAGES);
                            ColumnView s = images.items();
                            ColumnView topic = s.field(TableSchemas.IMAGE_TOPIC);
                            ColumnView format = s.hasField(TableSchemas.IMAGE_FORMAT)
                                    ? s.field(TableSchemas.IMAGE_FORMAT) : null;
                            ColumnView hot = s.hasField(TableSchemas.IMAGE_HOT_JPEG)
                                    ? s.field(TableSchemas.IMAGE_HOT_JPEG) : null;
                            for (int j = images.listStart(0); j < images.listEnd(0); j++) {
                                Map<String, Object> c = new LinkedHashMap<>();
                                c.put("index", j - images.listStart(0));
                                c.put("topic", topic.getString(j));
                                c.put("format", format == null ? null : format.getString(j));
                                c.put("hot_copy", hot != null && !hot.isNull(j));
                                cameras.add(c);
                            }
                        }
                    });
            StreamResiduals acc = new StreamResiduals(null);
            f.scan(ScanRequest.builder().columns(TableSchemas.STREAMS).filter(episodeFilter(id)).build(), b -> {
                for (int i = 0; i < b.rowCount(); i++) {
                    for (io.flywheel.rows.StreamMatch sm : b.streamMatches(i)) {
                        acc.add(sm.stream(), sm.matched(), sm.residualNs());
                    }
                }
            });
            List<Map<String, Object>> stats = new ArrayList<>();
            List<StreamReport> reports = new ArrayList<>(acc.reports());
            reports.sort((a, b) -> a.stream().compareTo(b.stream()));
            for (StreamReport r : reports) {
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("stream", r.stream());
                s.put("matched", r.matched());
                s.put("unmatched", r.unmatched());
                s.put("p50_ms", r.p50Ms());
                s.put("p99_ms", r.p99Ms());
                s.put("max_ms", r.maxMs());
                stats.add(s);
            }
            m.put("residuals", stats);
        }
        m.put("cameras", cameras);
        return m;
    }

    /**
     * Frames of an episode: index, master time, state, action, gripper, per-stream matches and flags
     * (and gripper_state / phase after enrichment); never the image bytes.
     *
     * @param id episode
     * @param offset first frame index
     * @param limit most frames, 1..{@value #MAX_PAGE}
     * @return {@code frame_count} (all frames of the episode), {@code offset}, {@code frames}
     * @throws ApiException 404 when the episode has no frames
     */
    public Map<String, Object> frames(String id, long offset, int limit) {
        try (LakeTable f = lake.table(TableSchemas.FRAMES)) {
            Set<String> have = names(f);
            long count = f.countRows(episodeFilter(id));
            if (count == 0) {
                throw ApiException.notFound("no frames of episode '" + id + "' in " + lake.location());
            }
            List<String> cols = new ArrayList<>(List.of(TableSchemas.FRAME_INDEX, TableSchemas.TIMESTAMP_NS, TableSchemas.STATE,
                    TableSchemas.ACTION, TableSchemas.GRIPPER,
                    "streams", "flags"));
            for (String c : List.of(TableSchemas.GRIPPER_STATE, TableSchemas.PHASE)) {
                if (have.contains(c)) {
                    cols.add(c);
                }
            }
            List<Map<String, Object>> rows = new ArrayList<>();
            f.scan(ScanRequest.builder().columns(cols).filter(episodeFilter(id) + " AND " + TableSchemas.FRAME_INDEX + " >= " + offset
                    + " AND " + TableSchemas.FRAME_INDEX + " < " + (offset + limit)).build(), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            rows.add(RowJson.row(b, i));
                        }
                    });
            rows.sort((a, b) -> Integer.compare((Integer) a.get(TableSchemas.FRAME_INDEX), (Integer) b.get(TableSchemas.FRAME_INDEX)));
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("episode_id", id);
            m.put("frame_count", count);
            m.put("offset", offset);
            m.put("limit", limit);
            m.put("frames", rows);
            return m;
        }
    }

    /**
     * An image to send: bytes and their media type.
     *
     * @param bytes the encoded image
     * @param contentType {@code image/jpeg} or {@code image/png}
     * @param source {@code hot_jpeg} (the enriched hot copy), {@code raw} (read through the locator) or
     *     {@code thumbnail} (the raw image scaled down)
     */
    public record Image(byte[] bytes, String contentType, String source) {}

    /**
     * One camera image of one frame: the hot JPEG copy when enrichment wrote one, else the raw bytes read
     * through the frame's locator from a raw file registered in {@code raw_files}.
     *
     * @param id episode
     * @param frame frame index
     * @param camera camera position in the frame's image list (0-based)
     * @param thumbnailWidth when &gt; 0, raw images wider than this are scaled down to it (JPEG)
     * @throws ApiException 404 when the frame or camera does not exist; 415 when the image is neither JPEG
     *     nor PNG (a raw pixel encoding); 403 when the locator names a file not registered in raw_files
     */
    public Image image(String id, int frame, int camera, int thumbnailWidth) throws IOException {
        Object[] found = new Object[2];
        try (LakeTable f = lake.table(TableSchemas.FRAMES)) {
            f.scan(ScanRequest.builder().columns(TableSchemas.IMAGES)
                    .filter(episodeFilter(id) + " AND " + TableSchemas.FRAME_INDEX + " = " + frame)
                    .limit(1).build(), b -> {
                        if (b.rowCount() == 0) {
                            return;
                        }
                        ColumnView images = b.column(TableSchemas.IMAGES);
                        ColumnView s = images.items();
                        int start = images.listStart(0);
                        int n = images.listEnd(0) - start;
                        if (camera >= n) {
                            found[0] = n; // reported after the scan, which wraps what its consumer throws
                            return;
                        }
                        int j = start + camera;
                        byte[] hot = s.hasField(TableSchemas.IMAGE_HOT_JPEG)
                                ? s.field(TableSchemas.IMAGE_HOT_JPEG).getBytes(j) : null;
                        if (hot != null) {
                            found[0] = hot;
                            return;
                        }
                        io.flywheel.rows.ImageLocator l = b.imageLocators(0).get(camera);
                        found[1] = RawLocator.fromStored(l.rawUri(), l.chunkOffset(), l.offset(), l.length(),
                                l.compression());
                    });
        }
        if (found[0] instanceof Integer n) {
            throw ApiException.notFound("frame " + frame + " of episode '" + id + "' has " + n + " camera(s); camera "
                    + camera + " does not exist");
        }
        if (found[0] != null) {
            return new Image((byte[]) found[0], "image/jpeg", "hot_jpeg");
        }
        if (found[1] == null) {
            throw ApiException.notFound("episode '" + id + "' has no frame " + frame);
        }
        RawLocator loc = (RawLocator) found[1];
        registered(loc.uri());
        byte[] bytes;
        try (LocatorReader r = new LocatorReader(lake.rawStorage())) {
            bytes = r.read(loc);
        }
        String type = mediaType(bytes);
        if (type == null) {
            throw new ApiException(415, "camera " + camera + " of frame " + frame + " of episode '" + id
                    + "' is not a JPEG or PNG image (a raw pixel encoding); run flywheel enrich for a hot JPEG copy");
        }
        if (thumbnailWidth > 0) {
            byte[] small = thumbnail(bytes, thumbnailWidth);
            if (small != null) {
                return new Image(small, "image/jpeg", "thumbnail");
            }
        }
        return new Image(bytes, type, "raw");
    }

    /** @return the local path of a raw file the lake registers */
    /** Refuses (403) a raw file the lake's raw_files table does not hold: the console serves only the lake's files. */
    void registered(String uri) {
        if (!registeredRaw.contains(uri)) {
            long n;
            try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
                n = t.countRows(TableSchemas.URI + " = " + Sql.quote(uri));
            }
            if (n == 0) {
                throw new ApiException(403, "raw file " + uri + " is not registered in the lake's raw_files table");
            }
            registeredRaw.add(uri);
        }
    }

    /** @return a registered raw file's local path (the alignment view reads whole local files), else 403 / 422 */
    Path rawFile(String uri) {
        registered(uri);
        URI u = URI.create(uri);
        if (u.getScheme() != null && !u.getScheme().equals("file")) {
            throw new ApiException(422, "raw file " + uri + " is not a local file; the alignment view reads local raw"
                    + " files");
        }
        return u.getScheme() == null ? Path.of(uri) : Path.of(u);
    }

    static String mediaType(byte[] b) {
        if (b.length > 3 && (b[0] & 0xff) == 0xff && (b[1] & 0xff) == 0xd8) {
            return "image/jpeg";
        }
        if (b.length > 8 && (b[0] & 0xff) == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G') {
            return "image/png";
        }
        return null;
    }

    private static byte[] thumbnail(byte[] encoded, int width) throws IOException {
        ImageIO.setUseCache(false);
        BufferedImage img = ImageIO.read(new ByteArrayInputStream(encoded));
        if (img == null || img.getWidth() <= width) {
            return null;
        }
        int h = Math.max(1, Math.round(img.getHeight() * (float) width / img.getWidth()));
        BufferedImage out = new BufferedImage(width, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = out.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
        g.drawImage(img, 0, 0, width, h, null);
        g.dispose();
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        ImageIO.write(out, "jpeg", bo);
        return bo.toByteArray();
    }

    // ------------------------------------------------------------------ alignment

    /** The message times of an episode's alignable streams, read once from its raw files. */
    private record EpisodeStreams(String master, Map<String, TopicStream> streams, Map<String, String> roles) {}

    /**
     * Re-aligns one stream of an episode to its master camera with another policy, from the message times
     * in the raw files (the lake keeps only the result of the policy used at ingest).
     *
     * @param id episode
     * @param r stream, method, tolerance, clock offset, on-miss, and the master frames to return
     * @return {@code master_topic}, {@code stream}, {@code streams} (the choices), {@code policy},
     *     {@code t0_ns}, {@code master_times_ns} and {@code stream_times_ns} (relative to t0, the window
     *     only), {@code pairs} (per master frame of the window: {@code frame} (master index),
     *     {@code kept}, {@code message} (stream index or -1), {@code residual_ns}), and {@code summary}
     *     ({@code frames}, {@code matched}, {@code unmatched}, {@code dropped}, residual p50/p99/max ms over
     *     the whole episode)
     * @throws ApiException 404 for an unknown episode or stream; 422 when the episode's master clock is not
     *     a stream of its raw files
     */
    public Map<String, Object> align(String id, AlignRequest r) throws IOException {
        EpisodeStreams es = streams(id);
        TopicStream master = es.streams().get(es.master());
        String stream = r.stream();
        if (stream == null) {
            stream = es.streams().keySet().stream().filter(s -> !s.equals(es.master())).findFirst()
                    .orElseThrow(() -> new ApiException(422, "episode '" + id + "' has only its master stream"));
        }
        TopicStream other = es.streams().get(stream);
        if (other == null || stream.equals(es.master())) {
            throw ApiException.notFound("episode '" + id + "' has no stream '" + stream + "' to align; streams: "
                    + es.streams().keySet().stream().filter(s -> !s.equals(es.master())).toList());
        }
        StreamPolicy policy = StreamPolicy.builder().method(r.method()).toleranceNs(r.toleranceNs())
                .clockOffsetNs(r.clockOffsetNs()).onMiss(r.onMiss()).build();
        Alignment a = Aligner.align(List.of(master, other), AlignOptions.builder().masterStream(es.master())
                .policy(stream, policy).policy(es.master(), StreamPolicy.of(AlignMethod.NEAREST, 0)).build());
        StreamAlignment sa = a.stream(stream);
        int masterFrames = a.masterFrames();
        int[] keptIndex = new int[masterFrames];
        Arrays.fill(keptIndex, -1);
        int[] mf = a.masterFrame();
        for (int f = 0; f < mf.length; f++) {
            keptIndex[mf[f]] = f;
        }
        long[] mt = master.timestampsNs();
        long[] st = other.timestampsNs();
        long t0 = mt.length == 0 ? 0 : Math.min(mt[0], st.length == 0 ? mt[0] : st[0]);
        int from = (int) Math.min(r.fromFrame(), masterFrames);
        int to = (int) Math.min((long) from + r.frameCount(), masterFrames);
        List<Map<String, Object>> pairs = new ArrayList<>();
        List<Long> residuals = new ArrayList<>();
        int matched = 0;
        int unmatched = 0;
        for (int m = 0; m < masterFrames; m++) {
            int f = keptIndex[m];
            int msg = f < 0 ? -1 : sa.index()[f];
            long res = f < 0 ? StreamAlignment.NO_RESIDUAL : sa.residualNs()[f];
            if (f >= 0 && msg >= 0) {
                matched++;
                residuals.add(Math.abs(res));
            } else if (f >= 0) {
                unmatched++;
            }
            if (m >= from && m < to) {
                Map<String, Object> p = new LinkedHashMap<>();
                p.put("frame", m);
                p.put("kept", f >= 0);
                p.put("message", msg);
                p.put("residual_ns", res == StreamAlignment.NO_RESIDUAL ? null : res);
                pairs.add(p);
            }
        }
        long lo = from < masterFrames ? mt[from] : 0;
        long hi = to > from ? mt[to - 1] : 0;
        long margin = Math.min(r.toleranceNs(), 1_000_000_000L) + Math.abs(r.clockOffsetNs());
        List<Long> streamTimes = new ArrayList<>();
        int firstMessage = -1;
        for (int i = 0; i < st.length; i++) {
            if (st[i] >= lo - margin && st[i] <= hi + margin) {
                if (firstMessage < 0) {
                    firstMessage = i;
                }
                streamTimes.add(st[i] - t0);
            }
        }
        List<Long> masterTimes = new ArrayList<>();
        for (int m = from; m < to; m++) {
            masterTimes.add(mt[m] - t0);
        }
        ResidualDistribution rs = ResidualDistribution.of(residuals.stream().mapToLong(Long::longValue).toArray());
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("frames", masterFrames);
        summary.put("matched", matched);
        summary.put("unmatched", unmatched);
        summary.put("dropped", a.droppedFrames());
        summary.put("p50_ms", rs.p50Ms());
        summary.put("p99_ms", rs.p99Ms());
        summary.put("max_ms", rs.maxMs());
        Map<String, Object> pol = new LinkedHashMap<>();
        pol.put("method", r.method().name().toLowerCase(Locale.ROOT));
        pol.put("tolerance_ms", r.toleranceNs() / 1e6);
        pol.put("clock_offset_ms", r.clockOffsetNs() / 1e6);
        pol.put("on_miss", r.onMiss() == MissPolicy.DROP_FRAME ? "drop" : "flag");
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("episode_id", id);
        m.put("master_topic", es.master());
        m.put("stream", stream);
        m.put("stream_role", es.roles().get(stream));
        m.put("streams", es.streams().keySet().stream().filter(s -> !s.equals(es.master())).toList());
        m.put("policy", pol);
        m.put("t0_ns", t0);
        m.put("from_frame", from);
        m.put("master_times_ns", masterTimes);
        m.put("first_message", Math.max(0, firstMessage));
        m.put("stream_times_ns", streamTimes);
        m.put("pairs", pairs);
        m.put("summary", summary);
        return m;
    }

    private EpisodeStreams streams(String id) throws IOException {
        EpisodeStreams cached = streamsCache.get(id);
        if (cached != null) {
            return cached;
        }
        String metadata;
        String masterTopic;
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            List<String[]> rows = new ArrayList<>();
            t.scan(ScanRequest.builder().columns(TableSchemas.EPISODE_ID, TableSchemas.MASTER_TOPIC, TableSchemas.METADATA)
                    .filter(episodeFilter(id)).limit(1).build(), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            rows.add(new String[] {RowJson.str(b, TableSchemas.MASTER_TOPIC, i),
                                    RowJson.str(b, TableSchemas.METADATA, i)});
                        }
                    });
            if (rows.isEmpty()) {
                throw ApiException.notFound("no episode '" + id + "' in " + lake.location());
            }
            masterTopic = rows.get(0)[0];
            metadata = rows.get(0)[1];
        }
        List<String> files = SourceFiles.uris(metadata);
        io.flywheel.curate.align.EpisodeStreams raw;
        try {
            raw = io.flywheel.curate.align.EpisodeStreams.read(id, files,
                    io.flywheel.curate.align.EpisodeStreams.timelines(metadata), this::rawFile);
        } catch (io.flywheel.error.BadInputException e) { // no source files, or they no longer hold the episode
            throw new ApiException(422, e.getMessage());
        }
        if (!raw.streams().containsKey(masterTopic)) {
            throw new ApiException(422, "episode '" + id + "' is aligned to '" + masterTopic
                    + "', which is not a stream of its raw files (a fixed-rate master clock): nothing to pair");
        }
        EpisodeStreams es = new EpisodeStreams(masterTopic, raw.streams(), raw.roles());
        streamsCache.put(id, es);
        return es;
    }

    // ------------------------------------------------------------------ embedding map

    /**
     * @param trainsetTag training set whose mined episodes are marked, or null for the newest
     * @return {@code enriched}, {@code model}, {@code dimension}, {@code explained} [PC1, PC2],
     *     {@code episodes_total}, {@code episodes_with_embedding}, {@code sample_stride},
     *     {@code mined_from}, {@code scenes} (scene to colour), {@code points} (episode_id, scene,
     *     outcome, failure, mined, x, y)
     * @throws ApiException 404 when the training set does not exist
     */
    public Map<String, Object> map(String trainsetTag) {
        EmbeddingMap em = embeddingMap(trainsetTag);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enriched", em.enriched());
        m.put("model", em.model());
        m.put("dimension", em.dimension());
        m.put("explained", em.explained());
        m.put("episodes_total", em.episodesTotal());
        m.put("episodes_with_embedding", em.episodesWithEmbedding());
        m.put("sample_stride", em.sampleStride());
        m.put("mined_from", em.minedFrom());
        Map<String, String> scenes = new LinkedHashMap<>();
        for (String s : em.sceneColours().keySet()) {
            scenes.put(s, em.sceneColour(s));
        }
        m.put("scenes", scenes);
        List<Map<String, Object>> pts = em.points().stream().map(EmbeddingMap.Point::fields).toList();
        m.put("points", pts);
        return m;
    }

    /** @return the map, cached per episodes and trainsets version */
    public EmbeddingMap embeddingMap(String trainsetTag) {
        String key;
        try (LakeTable e = lake.table(TableSchemas.EPISODES)) {
            key = e.version() + "/" + trainsetsVersion() + "/" + trainsetTag;
        }
        EmbeddingMap em = mapCache.get(key);
        if (em == null) {
            try {
                em = EmbeddingMap.read(lake, EmbeddingMap.Options.builder().maxPoints(mapMaxPoints)
                        .trainsetTag(trainsetTag).build());
            } catch (IllegalArgumentException | io.flywheel.error.NotFoundException ex) {
                throw ApiException.notFound(ex.getMessage());
            }
            if (mapCache.size() > 8) {
                mapCache.clear();
            }
            mapCache.put(key, em);
        }
        return em;
    }

    private long trainsetsVersion() {
        if (!lake.hasTable(TrainsetTables.TRAINSETS)) {
            return 0;
        }
        try (LakeTable t = lake.table(TrainsetTables.TRAINSETS)) {
            return t.version();
        }
    }

    // ------------------------------------------------------------------ training sets

    /**
     * @return {@code trainsets}: every set, oldest first: tag, created_at_ns, episode/sample/base/mined
     *     counts, {@code parent} (the set committed before it, or null) and its lineage
     */
    public Map<String, Object> trainsets() {
        List<Map<String, Object>> out = new ArrayList<>();
        String parent = null;
        for (Trainset s : Trainsets.list(lake)) {
            Map<String, Object> m = trainsetSummary(s);
            m.put("parent", parent);
            out.add(m);
            parent = s.tag();
        }
        return Map.of("trainsets", out);
    }

    private static Map<String, Object> trainsetSummary(Trainset s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tag", s.tag());
        m.put("created_at_ns", s.createdAtNs());
        m.put("episodes", s.episodeCount());
        m.put("samples", s.sampleCount());
        m.put("base", s.baseCount());
        m.put("mined", s.minedCount());
        m.put("samples_version", s.samplesVersion());
        m.put("episodes_version", s.episodesVersion());
        m.put("lineage", s.lineage());
        return m;
    }

    /**
     * @param tag a training set
     * @param limit most episodes listed
     * @return the set's summary, {@code composition} (dimension to value to episode count) and its first
     *     {@code limit} episodes with why each is in ({@code in_base}, {@code mined_by})
     * @throws ApiException 404 when there is no such set
     */
    public Map<String, Object> trainset(String tag, int limit) {
        Trainset s = openSet(tag);
        List<TrainsetEpisode> eps = Trainsets.episodes(lake, s);
        Map<String, Object> m = trainsetSummary(s);
        Map<String, Map<String, Long>> comp = new LinkedHashMap<>();
        for (String d : TrainsetDiff.DIMENSIONS) {
            Map<String, Long> c = new TreeMap<>();
            for (TrainsetEpisode e : eps) {
                c.merge(e.info().value(d), 1L, Long::sum);
            }
            comp.put(d, c);
        }
        m.put("composition", comp);
        List<Map<String, Object>> list = new ArrayList<>();
        for (TrainsetEpisode e : eps.subList(0, Math.min(limit, eps.size()))) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("episode_id", e.info().episodeId());
            x.put("scene", e.info().scene());
            x.put("object", e.info().object());
            x.put("in_base", e.inBase());
            List<Map<String, Object>> by = new ArrayList<>();
            for (MinedEpisode me : e.minedBy()) {
                by.add(Map.of("query_episode_id", me.queryEpisodeId(), "distance", me.distance(), "rank", me.rank()));
            }
            x.put("mined_by", by);
            x.put("sample_count", e.sampleCount());
            list.add(x);
        }
        m.put("episode_list", list);
        return m;
    }

    private Trainset openSet(String tag) {
        try {
            return Trainsets.open(lake, tag);
        } catch (io.flywheel.error.NotFoundException e) {
            throw ApiException.notFound(e.getMessage());
        }
    }

    /**
     * @return the diff of two sets: {@code from}, {@code to}, {@code added}, {@code removed}, {@code kept},
     *     counts, hard-case shares and rule, {@code composition} (dimension to value to [from, to] counts)
     * @throws ApiException 404 when a tag does not exist
     */
    public Map<String, Object> diff(String from, String to) {
        TrainsetDiff d = diffOf(from, to);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("from", d.from());
        m.put("to", d.to());
        m.put("from_count", d.fromCount());
        m.put("to_count", d.toCount());
        m.put("kept", d.kept());
        m.put("added", d.added());
        m.put("removed", d.removed());
        m.put("hard_case_rule", d.hardCaseRule());
        m.put("hard_share_from", d.hardShareFrom());
        m.put("hard_share_to", d.hardShareTo());
        Map<String, Object> comp = new LinkedHashMap<>();
        d.composition().forEach((dim, values) -> {
            Map<String, Object> v = new LinkedHashMap<>();
            values.forEach((k, c) -> v.put(k, List.of(c[0], c[1])));
            comp.put(dim, v);
        });
        m.put("composition", comp);
        return m;
    }

    /** @return {@link CompositionChart} of the diff, as PNG bytes */
    public byte[] diffPng(String from, String to) throws IOException {
        TrainsetDiff d = diffOf(from, to);
        Path tmp = Files.createTempFile("flywheel-diff", ".png");
        try {
            CompositionChart.write(d, tmp);
            return Files.readAllBytes(tmp);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private TrainsetDiff diffOf(String from, String to) {
        openSet(from);
        openSet(to);
        Set<String> objects = TrainsetDiff.queryObjects(lake, to);
        Predicate<EpisodeInfo> hard = e -> objects.contains(e.object());
        String rule = objects.isEmpty() ? "no hard-case rule: the newer set has no mining queries with an object"
                : "object in " + objects;
        return TrainsetDiff.of(lake, from, to, hard, rule);
    }

    // ------------------------------------------------------------------ helpers

    static String episodeFilter(String id) {
        return TableSchemas.EPISODE_ID + " = " + Sql.quote(id);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parse(Object json) {
        if (!(json instanceof String s) || s.isBlank()) {
            return new LinkedHashMap<>();
        }
        try {
            Object o = JSON.readValue(s, Object.class);
            return o instanceof Map<?, ?> mm ? (Map<String, Object>) mm : new LinkedHashMap<>(Map.of("value", o));
        } catch (IOException e) {
            return new LinkedHashMap<>(Map.of("unparsed", s));
        }
    }

    private static Map<String, String> orderedMap(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return Collections.unmodifiableMap(m);
    }
}
