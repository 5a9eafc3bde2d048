package io.flywheel.lake;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;

import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.fragment.FragmentUpdateResult;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.operation.Update;

import io.flywheel.rows.TelemetryRow;

/**
 * Links alerts to episodes after the fact: the {@code telemetry} rows of class {@code alert} with no
 * {@code episode_id} get the episode their robot was recording at their {@code ts_ns} ({@link EpisodeSpans}), for
 * episodes ingested after the alert arrived. A column-scoped update of {@code telemetry.episode_id} (every other
 * column keeps its bytes), one lake commit ({@code link-alerts}); it commutes with concurrent telemetry appends.
 * Idempotent: a linked alert is never changed again, and a run with nothing to link commits nothing.
 */
public final class AlertLinks {
    private AlertLinks() {}

    /**
     * What a link run did.
     *
     * @param unlinked alerts without an episode before the run (of the robots asked for)
     * @param linked alerts given an episode by this run
     * @param lakeCommit the commit's sequence number, or -1 when nothing was linked (no commit)
     */
    public record Result(long unlinked, long linked, long lakeCommit) {}

    /** Lance filter of the alerts still to link. */
    static String unlinkedFilter(Collection<String> robots) {
        String f = FleetTables.MESSAGE_CLASS + " = " + Sql.quote(TelemetryRow.ALERT) + " AND "
                + TableSchemas.EPISODE_ID + " IS NULL";
        return robots == null ? f : f + " AND (" + Sql.in(TableSchemas.ROBOT_ID, new ArrayList<>(robots)) + ")";
    }

    /**
     * Links the unlinked alerts of some robots (or of every robot) to their episodes, as of the lake's newest
     * snapshot, retrying a commit conflict with another link run a few times.
     *
     * @param lake the lake
     * @param robots the robots whose alerts to link, or null for every robot
     * @return counts and the commit
     * @throws io.flywheel.error.StorageUnavailableException when the lake cannot be read or written
     */
    public static Result link(Lake lake, Collection<String> robots) {
        for (int attempt = 1; ; attempt++) {
            lake.refresh();
            if (!lake.hasTable(FleetTables.TELEMETRY)) {
                return new Result(0, 0, -1);
            }
            List<String> alertRobot = new ArrayList<>();
            List<Long> alertTs = new ArrayList<>();
            try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
                t.scan(ScanRequest.builder().columns(TableSchemas.ROBOT_ID, FleetTables.TS_NS)
                        .filter(unlinkedFilter(robots)).build(), b -> {
                            ColumnView r = b.column(TableSchemas.ROBOT_ID);
                            ColumnView ts = b.column(FleetTables.TS_NS);
                            for (int i = 0; i < b.rowCount(); i++) {
                                alertRobot.add(r.getString(i));
                                alertTs.add(ts.getLong(i));
                            }
                        });
            }
            long unlinked = alertRobot.size();
            if (unlinked == 0) {
                return new Result(0, 0, -1);
            }
            Set<String> alertRobots = new TreeSet<>(alertRobot);
            EpisodeSpans spans = EpisodeSpans.load(lake, alertRobots);
            long matching = 0;
            for (int i = 0; i < alertRobot.size(); i++) {
                if (spans.episodeAt(alertRobot.get(i), alertTs.get(i)) != null) {
                    matching++;
                }
            }
            if (matching == 0) {
                return new Result(unlinked, 0, -1);
            }
            LinkChange change = new LinkChange(alertRobots, spans);
            LakeTransaction tx = lake.begin("link-alerts").summary("robots", String.join(",", alertRobots));
            tx.add(change);
            try {
                CommitResult done = tx.commit();
                long linked = done.tables().stream().filter(c -> c.table().equals(FleetTables.TELEMETRY))
                        .mapToLong(CommitResult.TableCommit::rowsWritten).sum();
                return new Result(unlinked, linked, linked == 0 ? -1 : done.snapshot().seq());
            } catch (CommitConflictException e) {
                if (attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    /** The update: found and written when staged, against the telemetry version it is staged on. */
    static final class LinkChange extends PendingChange {
        private final Set<String> robots;
        private final EpisodeSpans spans;

        LinkChange(Set<String> robots, EpisodeSpans spans) {
            super(FleetTables.TELEMETRY, "update");
            this.robots = Set.copyOf(robots);
            this.spans = spans;
        }

        @Override
        Set<String> keys() {
            return new LinkedHashSet<>(robots);
        }

        @Override
        List<String> columns() {
            return FleetTables.LINK_COLUMNS;
        }

        @Override
        boolean dependsOnFragments() {
            return true;
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) throws Exception {
            Map<Integer, List<long[]>> addrByFragment = new TreeMap<>();
            Map<Long, String> episodeOf = new LinkedHashMap<>();
            if (base != null) {
                ScanOptions o = new ScanOptions.Builder().columns(List.of(TableSchemas.ROBOT_ID, FleetTables.TS_NS))
                        .filter(unlinkedFilter(robots)).withRowAddress(true).build();
                try (LanceScanner s = base.newScan(o); ArrowReader r = s.scanBatches()) {
                    while (r.loadNextBatch()) {
                        VectorSchemaRoot b = r.getVectorSchemaRoot();
                        UInt8Vector addr = (UInt8Vector) b.getVector(ROW_ADDR);
                        VarCharVector robot = (VarCharVector) b.getVector(TableSchemas.ROBOT_ID);
                        org.apache.arrow.vector.BigIntVector ts =
                                (org.apache.arrow.vector.BigIntVector) b.getVector(FleetTables.TS_NS);
                        for (int i = 0; i < b.getRowCount(); i++) {
                            String e = spans.episodeAt(new String(robot.get(i), java.nio.charset.StandardCharsets.UTF_8),
                                    ts.get(i));
                            if (e != null) {
                                long a = addr.get(i);
                                episodeOf.put(a, e);
                                addrByFragment.computeIfAbsent((int) (a >>> 32), f -> new ArrayList<>())
                                        .add(new long[] {a});
                            }
                        }
                    }
                }
            }
            if (episodeOf.isEmpty()) {
                return new Staged(null, List.of(), null, false, Map.of(), 0, 0, 0);
            }
            Field episodeField = base.getSchema().findField(TableSchemas.EPISODE_ID);
            Map<Integer, FragmentMetadata> basis = new LinkedHashMap<>();
            List<Callable<FragmentUpdateResult>> tasks = new ArrayList<>();
            for (Map.Entry<Integer, List<long[]>> e : addrByFragment.entrySet()) {
                Fragment f = base.getFragment(e.getKey());
                basis.put(e.getKey(), f.metadata());
                List<long[]> at = e.getValue();
                tasks.add(() -> {
                    try (BufferAllocator a = alloc.newChildAllocator("link-" + f.getId(), 0, Long.MAX_VALUE);
                            VectorSchemaRoot part = part(at, episodeOf, episodeField, a);
                            ArrowArrayStream stream = ArrowArrayStream.allocateNew(a)) {
                        Data.exportArrayStream(a, new RootReader(part, a), stream);
                        return f.updateColumns(stream, ROW_ADDR, ROW_ADDR);
                    }
                });
            }
            List<FragmentMetadata> updated = new ArrayList<>();
            Set<Long> fields = new TreeSet<>();
            for (FragmentUpdateResult r : Parallel.run(tasks)) {
                updated.add(r.getUpdatedFragment());
                for (long id : r.getFieldsModified()) {
                    fields.add(id);
                }
            }
            Update op = Update.builder().updatedFragments(updated)
                    .fieldsModified(fields.stream().mapToLong(Long::longValue).toArray()).build();
            return new Staged(op, List.of(), null, false, basis, 0, episodeOf.size(), 0);
        }

        /** @return {@code _rowaddr} then {@code episode_id}, one row per alert of the fragment */
        private static VectorSchemaRoot part(List<long[]> addrs, Map<Long, String> episodeOf, Field episodeField,
                BufferAllocator alloc) {
            UInt8Vector a = new UInt8Vector(new Field(ROW_ADDR, FieldType.notNullable(new ArrowType.Int(64, false)),
                    null), alloc);
            VarCharVector ep = (VarCharVector) episodeField.createVector(alloc);
            try {
                a.allocateNew(addrs.size());
                ep.allocateNew();
                for (int i = 0; i < addrs.size(); i++) {
                    long addr = addrs.get(i)[0];
                    a.set(i, addr);
                    ep.setSafe(i, episodeOf.get(addr).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                }
                a.setValueCount(addrs.size());
                ep.setValueCount(addrs.size());
                List<FieldVector> vectors = List.of(a, ep);
                return new VectorSchemaRoot(List.of(a.getField(), episodeField), vectors, addrs.size());
            } catch (RuntimeException e) {
                a.close();
                ep.close();
                throw e;
            }
        }
    }
}
