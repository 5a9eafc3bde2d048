package io.flywheel.lake;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.flywheel.error.NotFoundException;

/**
 * One lake commit point: the state of the whole lake after a transaction, and what that transaction changed. Every
 * table of the lake is read at the version its snapshot names, so a reader sees all of a transaction's tables or
 * none of them. Snapshots are numbered from 1 (the lake's creation) without gaps; each is written once, last in its
 * commit, as {@code _lake/commits/<seq>.json}, and never changed.
 *
 * <p>Readers outside Flywheel (LanceDB, Spark) see each table's latest Lance version, which may run ahead of the last
 * snapshot while a commit is in flight or after a writer died mid-commit; to read a consistent set they open each
 * table at the version {@link #tables()} names ({@code flywheel lake versions --json} prints it).
 *
 * @param seq sequence number, &ge; 1
 * @param parentSeq the snapshot this one was committed on top of (0 for the first)
 * @param txnId the transaction's id (a UUID), also stored in each of its Lance transactions
 * @param operation what made it: {@code init}, {@code ingest}, {@code enrich}, {@code qc}, {@code dedup},
 *     {@code trainset}, {@code compact}, {@code migrate}, ...
 * @param committedAtNs commit time, int64 ns since the Unix epoch
 * @param writer the process that committed it ({@code pid@host})
 * @param tables every table of the lake and its Lance version in this snapshot
 * @param tags lake tags: tag name to the versions of the tables it pins (a training set's tag pins its tables)
 * @param properties lake properties: {@code flywheel.schema_version}, {@code created_at_ns}, ...
 * @param changes what the transaction changed, table by table
 * @param summary the transaction's summary lines ({@link LakeTransaction#summary}: e.g. {@code recording}, {@code tag}),
 *     in the order they were set; empty for a commit point written before summaries were kept. Not carried into later
 *     snapshots.
 */
public record LakeSnapshot(long seq, long parentSeq, String txnId, String operation, long committedAtNs, String writer,
        Map<String, Long> tables, Map<String, Map<String, Long>> tags, Map<String, String> properties,
        List<TableChange> changes, Map<String, String> summary) {
    public LakeSnapshot {
        tables = Collections.unmodifiableMap(new TreeMap<>(tables));
        TreeMap<String, Map<String, Long>> t = new TreeMap<>();
        tags.forEach((k, v) -> t.put(k, Collections.unmodifiableMap(new TreeMap<>(v))));
        tags = Collections.unmodifiableMap(t);
        properties = Collections.unmodifiableMap(new TreeMap<>(properties));
        changes = List.copyOf(changes);
        summary = summary == null ? Map.of() : Collections.unmodifiableMap(new java.util.LinkedHashMap<>(summary));
    }

    /** A snapshot without summary lines (as commit points were written before they were kept). */
    public LakeSnapshot(long seq, long parentSeq, String txnId, String operation, long committedAtNs, String writer,
            Map<String, Long> tables, Map<String, Map<String, Long>> tags, Map<String, String> properties,
            List<TableChange> changes) {
        this(seq, parentSeq, txnId, operation, committedAtNs, writer, tables, tags, properties, changes, Map.of());
    }

    /**
     * @param table table name
     * @return its version in this snapshot
     * @throws NotFoundException when the lake has no such table
     */
    public long version(String table) {
        Long v = tables.get(table);
        if (v == null) {
            throw new NotFoundException("the lake has no table '" + table + "' (lake commit " + seq + " has "
                    + tables.keySet() + ")");
        }
        return v;
    }

    /**
     * @param tag lake tag name
     * @return the versions of the tables the tag pins
     * @throws NotFoundException naming the tags there are when the tag does not exist
     */
    public Map<String, Long> tag(String tag) {
        Map<String, Long> t = tags.get(tag);
        if (t == null) {
            throw new NotFoundException("no tag '" + tag + "' in the lake (tags: " + (tags.isEmpty() ? "none"
                    : String.join(", ", tags.keySet())) + ")");
        }
        return t;
    }

    /**
     * What one transaction did to one table.
     *
     * @param table table name
     * @param kind {@code create}, {@code append}, {@code put} (rows replaced by key), {@code update} (named columns of
     *     existing rows), {@code overwrite}, {@code rollback} (a dead writer's uncommitted version undone),
     *     {@code compact}, {@code index}, {@code migrate}
     * @param fromVersion the table's version before (0 when the table was created)
     * @param toVersion its version after
     * @param rowsAdded rows appended
     * @param rowsUpdated rows whose named columns changed
     * @param rowsDeleted rows removed (replaced by key, or overwritten)
     * @param keys the partition keys written (episode ids, raw file sha256, ...), for conflict checks; empty when the
     *     change has none (an overwrite, a compaction)
     * @param columns for an update, the columns it changed; empty otherwise
     */
    public record TableChange(String table, String kind, long fromVersion, long toVersion, long rowsAdded,
            long rowsUpdated, long rowsDeleted, List<String> keys, List<String> columns) {
        public TableChange {
            keys = List.copyOf(keys);
            columns = List.copyOf(columns);
        }
    }
}
