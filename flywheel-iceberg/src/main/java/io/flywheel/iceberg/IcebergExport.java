package io.flywheel.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Consumer;

import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetTables;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.error.BadInputException;
import io.flywheel.error.ConflictException;
import io.flywheel.lake.CurationTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableRef;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.TrainsetEpisodeRow;
import io.flywheel.rows.TrainsetSampleRow;

/**
 * Writes a training set into two Apache Iceberg tables of a JDBC catalog, {@code NAMESPACE.samples} and
 * {@code NAMESPACE.episodes} (format v2, Parquet data files, unpartitioned), so that Spark, Trino, StarRocks or Doris
 * query it.
 *
 * <p>Each export of a tag commits one snapshot per table that holds exactly that set's rows (an overwrite of the
 * table's files), and an Iceberg tag of the same name on it: {@code SELECT ... FROM samples FOR VERSION AS OF
 * 'train-v2'} (Spark, Trino) reads that set, whatever was exported after it; the tables' current snapshot is the set
 * exported last. The overwrite and the tag are one catalog commit per table (an Iceberg transaction), so a table never
 * shows a set without its tag. Exporting a tag both tables already hold is a no-op; one that only the episodes table
 * holds (a run stopped between the two tables) is completed. A tag that names another set (another samples version
 * of this lake, or another lake) is refused. Iceberg table spec: https://iceberg.apache.org/spec/ (snapshots,
 * references).
 *
 * <p>Columns. {@code samples}: trainset_tag, sample_index (int64), episode_index (int32), episode_id, frame_index
 * (int32), timestamp_ns (int64 ns since the Unix epoch, master clock), timestamp (timestamptz, µs), state and action
 * (list&lt;float64&gt;, nullable), gripper (float64), images (list of struct topic, raw_uri, offset, length, format,
 * width, height: where the encoded image lies in the raw file; image bytes are not copied), gripper_state, phase,
 * flags (list&lt;string&gt;). {@code episodes}: trainset_tag, episode_index, episode_id, robot_id, task, scene,
 * object, outcome, in_base, mined_by (list of struct query_episode_id, distance, rank), first_sample, sample_count,
 * state_names and action_names (list&lt;string&gt;: one name per value of the episode's samples' state / action, in
 * vector order, e.g. {@code left_follow.joint_1}; null when the lake does not know them). A table created by an export
 * before the names columns gets them added (Iceberg schema evolution; its older snapshots keep their schema).
 */
public final class IcebergExport {
    /** Snapshot summary keys naming what a snapshot holds. */
    public static final String SUMMARY_TAG = "flywheel.tag";
    public static final String SUMMARY_LAKE = "flywheel.lake";
    public static final String SUMMARY_VERSION = "flywheel.version";
    /** Rows per Parquet data file before a new one is started. */
    static final int ROWS_PER_FILE = 500_000;

    static final Schema SAMPLES = new Schema(
            Types.NestedField.required(1, "trainset_tag", Types.StringType.get()),
            Types.NestedField.required(2, "sample_index", Types.LongType.get()),
            Types.NestedField.required(3, "episode_index", Types.IntegerType.get()),
            Types.NestedField.required(4, "episode_id", Types.StringType.get()),
            Types.NestedField.required(5, "frame_index", Types.IntegerType.get()),
            Types.NestedField.required(6, "timestamp_ns", Types.LongType.get()),
            Types.NestedField.required(7, "timestamp", Types.TimestampType.withZone()),
            Types.NestedField.optional(8, "state", Types.ListType.ofRequired(20, Types.DoubleType.get())),
            Types.NestedField.optional(9, "action", Types.ListType.ofRequired(21, Types.DoubleType.get())),
            Types.NestedField.optional(10, "gripper", Types.DoubleType.get()),
            Types.NestedField.required(11, "images", Types.ListType.ofRequired(22, Types.StructType.of(
                    Types.NestedField.required(30, "topic", Types.StringType.get()),
                    Types.NestedField.required(31, "raw_uri", Types.StringType.get()),
                    Types.NestedField.required(32, "offset", Types.LongType.get()),
                    Types.NestedField.required(33, "length", Types.LongType.get()),
                    Types.NestedField.optional(34, "format", Types.StringType.get()),
                    Types.NestedField.optional(35, "width", Types.IntegerType.get()),
                    Types.NestedField.optional(36, "height", Types.IntegerType.get())))),
            Types.NestedField.optional(12, "gripper_state", Types.StringType.get()),
            Types.NestedField.optional(13, "phase", Types.StringType.get()),
            Types.NestedField.required(14, "flags", Types.ListType.ofRequired(23, Types.StringType.get())));

    static final Schema EPISODES = new Schema(
            Types.NestedField.required(1, "trainset_tag", Types.StringType.get()),
            Types.NestedField.required(2, "episode_index", Types.IntegerType.get()),
            Types.NestedField.required(3, "episode_id", Types.StringType.get()),
            Types.NestedField.optional(4, "robot_id", Types.StringType.get()),
            Types.NestedField.optional(5, "task", Types.StringType.get()),
            Types.NestedField.optional(6, "scene", Types.StringType.get()),
            Types.NestedField.optional(7, "object", Types.StringType.get()),
            Types.NestedField.optional(8, "outcome", Types.StringType.get()),
            Types.NestedField.required(9, "in_base", Types.BooleanType.get()),
            Types.NestedField.required(10, "mined_by", Types.ListType.ofRequired(20, Types.StructType.of(
                    Types.NestedField.required(30, "query_episode_id", Types.StringType.get()),
                    Types.NestedField.required(31, "distance", Types.DoubleType.get()),
                    Types.NestedField.required(32, "rank", Types.IntegerType.get())))),
            Types.NestedField.required(11, "first_sample", Types.LongType.get()),
            Types.NestedField.required(12, "sample_count", Types.LongType.get()),
            Types.NestedField.optional(13, "state_names", Types.ListType.ofOptional(40, Types.StringType.get()),
                    "one name per value of the samples' state, in vector order"),
            Types.NestedField.optional(14, "action_names", Types.ListType.ofOptional(41, Types.StringType.get()),
                    "one name per value of the samples' action, in vector order"));

    private IcebergExport() {
    }

    /**
     * Where to write.
     *
     * @param catalogUri JDBC URI of the catalog, e.g. {@code jdbc:sqlite:/data/iceberg/catalog.db} or
     *     {@code jdbc:postgresql://host/db}
     * @param warehouse folder the tables' metadata and data files go to (created when missing)
     * @param namespace catalog namespace of the two tables, e.g. {@code flywheel}
     * @param catalogName the catalog's name in the JDBC store (Iceberg's {@code catalog_name} column)
     */
    public record Options(String catalogUri, Path warehouse, String namespace, String catalogName) {
        public Options {
            Objects.requireNonNull(warehouse, "warehouse");
            catalogUri = catalogUri == null ? "jdbc:sqlite:" + warehouse.toAbsolutePath().resolve("catalog.db")
                    : catalogUri;
            namespace = namespace == null ? "flywheel" : namespace;
            catalogName = catalogName == null ? "flywheel" : catalogName;
            if (!catalogUri.startsWith("jdbc:")) {
                throw new BadInputException("--catalog '" + catalogUri + "': expected a JDBC URI (jdbc:sqlite:FILE, "
                        + "jdbc:postgresql://...)");
            }
            if (!namespace.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new BadInputException("namespace '" + namespace + "': expected letters, digits and '_'");
            }
        }

        /** @return options with the SQLite catalog {@code WAREHOUSE/catalog.db} and namespace {@code flywheel} */
        public static Options sqlite(Path warehouse) {
            return new Options(null, warehouse, null, null);
        }
    }

    /**
     * One table's part of an export.
     *
     * @param table {@code NAMESPACE.samples} or {@code NAMESPACE.episodes}
     * @param snapshotId the snapshot the tag names
     * @param rows rows in that snapshot
     * @param dataFiles Parquet data files written now (0 when the tag was there already)
     * @param bytes bytes of those files
     * @param written whether this call committed the snapshot
     */
    public record TableResult(String table, long snapshotId, long rows, int dataFiles, long bytes, boolean written) {}

    /**
     * @param tag the training set
     * @param catalogUri the catalog written
     * @param warehouse the warehouse folder
     * @param tables samples, then episodes
     * @param seconds wall time
     */
    public record Result(String tag, String catalogUri, Path warehouse, List<TableResult> tables, double seconds) {
        /** @return whether both tables held the tag already (nothing was written) */
        public boolean alreadyExported() {
            return tables.stream().noneMatch(TableResult::written);
        }
    }

    /**
     * Exports training set {@code tag} of {@code lake}.
     *
     * @param progress receives progress lines (rows done / total, rate, ETA)
     * @return what was committed
     * @throws io.flywheel.error.NotFoundException for an unknown tag (naming the lake's tags)
     * @throws ConflictException when an Iceberg tag of that name holds another set
     * @throws BadInputException when the catalog cannot be opened (naming the URI)
     * @throws IOException when the warehouse cannot be written
     */
    public static Result export(Lake lake, String tag, Options options, Consumer<String> progress) throws IOException {
        long t0 = System.nanoTime();
        Trainset set = Trainsets.open(lake, tag);
        boolean created = !Files.exists(options.warehouse());
        Files.createDirectories(options.warehouse());
        String origin = lake.location();
        JdbcCatalog opened;
        try {
            opened = open(options);
        } catch (RuntimeException e) {
            if (created) { // a catalog that cannot be opened leaves no empty warehouse behind
                io.flywheel.lake.LocalFiles.deleteTree(options.warehouse());
            }
            throw e;
        }
        try (JdbcCatalog catalog = opened) {
            Namespace ns = Namespace.of(options.namespace());
            if (!catalog.namespaceExists(ns)) {
                try {
                    catalog.createNamespace(ns);
                } catch (AlreadyExistsException raced) {
                    // another export created it
                }
            }
            // episodes first: a samples table with the tag means the set is complete
            TableResult episodes = exportTable(catalog, TableIdentifier.of(ns, "episodes"), EPISODES, tag, origin,
                    set.episodesVersion(), set.episodeCount(), progress,
                    (schema, sink) -> {
                        List<TrainsetEpisodeRow> rows = new ArrayList<>();
                        forEachEpisode(lake, set, rows::add);
                        Map<String, io.flywheel.curate.trainset.ValueNames> names = Trainsets.valueNames(lake,
                                rows.stream().map(TrainsetEpisodeRow::episodeId).toList());
                        for (TrainsetEpisodeRow r : rows) {
                            sink.accept(episodeRecord(schema, tag, r, names.get(r.episodeId())));
                        }
                    });
            TableResult samples = exportTable(catalog, TableIdentifier.of(ns, "samples"), SAMPLES, tag, origin,
                    set.samplesVersion(), set.sampleCount(), progress,
                    (schema, sink) -> forEachSample(lake, set, r -> sink.accept(sampleRecord(schema, tag, r))));
            return new Result(tag, options.catalogUri(), options.warehouse(), List.of(samples, episodes),
                    (System.nanoTime() - t0) / 1e9);
        }
    }

    /** @return the JDBC catalog of {@code options}, its tables in the warehouse folder */
    public static JdbcCatalog open(Options options) {
        JdbcCatalog catalog = new JdbcCatalog();
        catalog.setConf(new org.apache.hadoop.conf.Configuration());
        Map<String, String> props = new HashMap<>();
        props.put(CatalogProperties.URI, options.catalogUri());
        props.put(CatalogProperties.WAREHOUSE_LOCATION, options.warehouse().toAbsolutePath().toString());
        props.put("jdbc.schema-version", "V1"); // namespaces and views in the catalog tables
        try {
            catalog.initialize(options.catalogName(), props);
        } catch (RuntimeException e) {
            throw new BadInputException("cannot open the Iceberg catalog " + options.catalogUri() + ": " + rootMessage(e),
                    e);
        }
        return catalog;
    }

    /** The rows of one table, built for the table's own schema (the catalog assigns its field ids). */
    private interface RowSource {
        void forEach(Schema schema, Consumer<Record> sink) throws IOException;
    }

    private static TableResult exportTable(JdbcCatalog catalog, TableIdentifier id, Schema schema, String tag,
                                           String lake, long version, long total, Consumer<String> progress,
                                           RowSource rows) throws IOException {
        Table table;
        if (catalog.tableExists(id)) {
            Table loaded = catalog.loadTable(id);
            if (schema.columns().stream().anyMatch(c -> loaded.schema().findField(c.name()) == null)) {
                loaded.updateSchema().unionByNameWith(schema).commit(); // columns added since the table was made
                loaded.refresh();
            }
            table = loaded;
        } else {
            try {
                table = catalog.createTable(id, schema, PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2", TableProperties.DEFAULT_FILE_FORMAT, "parquet"));
            } catch (AlreadyExistsException raced) {
                table = catalog.loadTable(id);
            }
        }
        SnapshotRef ref = table.refs().get(tag);
        if (ref != null) {
            Snapshot s = table.snapshot(ref.snapshotId());
            Map<String, String> sum = s.summary();
            if (!lake.equals(sum.get(SUMMARY_LAKE)) || !Long.toString(version).equals(sum.get(SUMMARY_VERSION))) {
                throw new ConflictException("Iceberg table " + id + " has a tag '" + tag + "' holding another set ("
                        + sum.get(SUMMARY_LAKE) + " version " + sum.get(SUMMARY_VERSION) + "; this is " + lake
                        + " version " + version + "): drop that tag, or export into another namespace");
            }
            return new TableResult(id.toString(), s.snapshotId(), Long.parseLong(sum.getOrDefault("total-records",
                    "-1")), 0, 0, false);
        }
        List<DataFile> files = new ArrayList<>();
        boolean committed = false;
        try {
            writeFiles(table, id, total, progress, rows, files);
            Transaction tx = table.newTransaction();
            OverwriteFiles overwrite = tx.newOverwrite().overwriteByRowFilter(Expressions.alwaysTrue());
            files.forEach(overwrite::addFile);
            overwrite.set(SUMMARY_TAG, tag).set(SUMMARY_LAKE, lake).set(SUMMARY_VERSION, Long.toString(version)).commit();
            long snapshotId = tx.table().currentSnapshot().snapshotId();
            tx.manageSnapshots().createTag(tag, snapshotId).commit();
            tx.commitTransaction();
            committed = true;
            long rowsWritten = files.stream().mapToLong(DataFile::recordCount).sum();
            long bytes = files.stream().mapToLong(DataFile::fileSizeInBytes).sum();
            return new TableResult(id.toString(), snapshotId, rowsWritten, files.size(), bytes, true);
        } finally {
            if (!committed) { // nothing references them: leave no orphan files behind
                for (DataFile f : files) {
                    try {
                        table.io().deleteFile(f.location());
                    } catch (RuntimeException ignored) {
                        // best effort; the failure that got here is what matters
                    }
                }
            }
        }
    }

    private static void writeFiles(Table table, TableIdentifier id, long total, Consumer<String> progress,
                                   RowSource rows, List<DataFile> files) throws IOException {
        Schema schema = table.schema();
        long t0 = System.nanoTime();
        @SuppressWarnings("unchecked")
        DataWriter<Record>[] writer = new DataWriter[1];
        long[] done = {0};
        try {
            rows.forEach(schema, rec -> {
                try {
                    if (writer[0] == null) {
                        writer[0] = newWriter(table, schema);
                    }
                    writer[0].write(rec);
                    done[0]++;
                    if (done[0] % ROWS_PER_FILE == 0) {
                        writer[0].close();
                        files.add(writer[0].toDataFile());
                        writer[0] = null;
                    }
                    if (done[0] % 20_000 == 0 || done[0] == total) {
                        double s = (System.nanoTime() - t0) / 1e9;
                        double rate = done[0] / Math.max(s, 1e-9);
                        progress.accept(String.format(Locale.ROOT, "iceberg: %s %d/%d rows, %.0f rows/s, ETA %.0f s", id,
                                done[0], total, rate, Math.max(0, total - done[0]) / rate));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            if (writer[0] != null) {
                writer[0].close();
                files.add(writer[0].toDataFile());
                writer[0] = null;
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        } finally {
            if (writer[0] != null) {
                writer[0].close();
                files.add(writer[0].toDataFile()); // deleted by the caller: nothing committed
            }
        }
    }

    private static DataWriter<Record> newWriter(Table table, Schema schema) throws IOException {
        String name = FileFormat.PARQUET.addExtension(UUID.randomUUID().toString());
        OutputFile out = table.io().newOutputFile(table.locationProvider().newDataLocation(name));
        return Parquet.writeData(out).schema(schema).createWriterFunc(GenericParquetWriter::create).overwrite()
                .withSpec(PartitionSpec.unpartitioned()).build();
    }

    private static void forEachSample(Lake lake, Trainset set, Consumer<TrainsetSampleRow> c) {
        try (LakeTable t = lake.table(TrainsetTables.SAMPLES, TableRef.version(set.samplesVersion()))) {
            t.forEachRow(CurationTables.TRAINSET_SAMPLES, ScanRequest.all(), c);
        }
    }

    private static void forEachEpisode(Lake lake, Trainset set, Consumer<TrainsetEpisodeRow> c) {
        try (LakeTable t = lake.table(TrainsetTables.EPISODES, TableRef.version(set.episodesVersion()))) {
            t.forEachRow(CurationTables.TRAINSET_EPISODES, ScanRequest.all(), c);
        }
    }

    static Record sampleRecord(Schema schema, String tag, TrainsetSampleRow s) {
        FrameRow f = s.frame();
        Record r = GenericRecord.create(schema);
        r.setField("trainset_tag", tag);
        r.setField("sample_index", s.sampleIndex());
        r.setField("episode_index", s.episodeIndex());
        r.setField("episode_id", f.episodeId());
        r.setField("frame_index", f.frameIndex());
        r.setField("timestamp_ns", f.timestampNs());
        r.setField("timestamp", OffsetDateTime.ofInstant(Instant.ofEpochSecond(0, f.timestampNs()), ZoneOffset.UTC));
        r.setField("state", doubles(f.state()));
        r.setField("action", doubles(f.action()));
        r.setField("gripper", f.gripper());
        Types.StructType image = schema.findType("images.element").asStructType();
        List<Record> images = new ArrayList<>();
        for (ImageLocator l : f.images()) {
            Record i = GenericRecord.create(image);
            i.setField("topic", l.topic());
            i.setField("raw_uri", l.rawUri());
            i.setField("offset", l.offset());
            i.setField("length", l.length());
            i.setField("format", l.format());
            i.setField("width", l.width());
            i.setField("height", l.height());
            images.add(i);
        }
        r.setField("images", images);
        r.setField("gripper_state", f.gripperState());
        r.setField("phase", f.phase());
        r.setField("flags", f.flags());
        return r;
    }

    static Record episodeRecord(Schema schema, String tag, TrainsetEpisodeRow e,
                                io.flywheel.curate.trainset.ValueNames names) {
        Record r = GenericRecord.create(schema);
        if (names != null && schema.findField("state_names") != null) {
            r.setField("state_names", names.state().isEmpty() ? null : names.state());
            r.setField("action_names", names.action().isEmpty() ? null : names.action());
        }
        r.setField("trainset_tag", tag);
        r.setField("episode_index", e.episodeIndex());
        r.setField("episode_id", e.episodeId());
        r.setField("robot_id", e.robotId());
        r.setField("task", e.task());
        r.setField("scene", e.scene());
        r.setField("object", e.object());
        r.setField("outcome", e.outcome());
        r.setField("in_base", e.inBase());
        Types.StructType mined = schema.findType("mined_by.element").asStructType();
        List<Record> by = new ArrayList<>();
        for (TrainsetEpisodeRow.MinedBy m : e.minedBy()) {
            Record x = GenericRecord.create(mined);
            x.setField("query_episode_id", m.queryEpisodeId());
            x.setField("distance", m.distance());
            x.setField("rank", m.rank());
            by.add(x);
        }
        r.setField("mined_by", by);
        r.setField("first_sample", e.firstSample());
        r.setField("sample_count", e.sampleCount());
        return r;
    }

    private static List<Double> doubles(double[] v) {
        if (v == null) {
            return null;
        }
        List<Double> out = new ArrayList<>(v.length);
        for (double d : v) {
            out.add(d);
        }
        return out;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    /** @return per table of the namespace, the Flywheel tags it holds, sorted */
    public static Map<String, List<String>> tags(Options options) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        try (JdbcCatalog catalog = open(options)) {
            for (String name : List.of("samples", "episodes")) {
                TableIdentifier id = TableIdentifier.of(options.namespace(), name);
                if (catalog.tableExists(id)) {
                    Table t = catalog.loadTable(id);
                    out.put(id.toString(), t.refs().entrySet().stream().filter(e -> e.getValue().isTag())
                            .map(Map.Entry::getKey).sorted().toList());
                }
            }
        }
        return out;
    }
}
