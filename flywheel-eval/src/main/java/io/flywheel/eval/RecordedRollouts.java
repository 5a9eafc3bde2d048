package io.flywheel.eval;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;
import io.flywheel.error.ConflictException;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.lake.EvalTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.LakeTransaction;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;
import io.flywheel.mcap.McapFormatException;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.EvalEpisodeRow;
import io.flywheel.rows.EvalRunRow;
import io.flywheel.rows.PolicyRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * Evaluation rollouts recorded as MCAP episodes ({@code flywheel eval ingest LAKE FILE.mcap|FOLDER}): each file is
 * ingested as {@code flywheel ingest} would ({@link IngestJob}: the same raw_files, episodes and frames rows, with the
 * default profile, alignment and quality rules; idempotent by content hash) and its rollout's {@code eval_episodes} row,
 * whose {@code episode_id} is the lake's episode id of that recording, goes into the same lake transaction, together
 * with its run's {@code eval_runs} row (the table rewritten with the run's {@code episode_count} counted up) and a new
 * policy's {@code policies} row. A recording already in the lake (ingested before with {@code ingest}, or by an earlier
 * run of this command) gets its missing eval row in one more transaction at the end; a rollout whose row is there is
 * left alone, so a second run adds nothing.
 *
 * <h2>The outcome metadata</h2> One MCAP Metadata record (spec: https://mcap.dev/spec#metadata-op0x0c) named
 * {@value #METADATA}, string values:
 * <ul>
 *   <li>required: {@code run_id}, {@code policy_version}, {@code task}, {@code object}, {@code lighting},
 *       {@code robot} (or {@code robot_id}), {@code success} ({@code true}/{@code false}, 1/0, yes/no);</li>
 *   <li>optional: {@code scene}, {@code duration_s} (seconds, a number &ge; 0; absent: the recorded episode's
 *       duration), {@code failure_mode} (dropped for a success), {@code intervention} (as success; default false).</li>
 * </ul>
 * Every file is read and checked before anything is committed: a file without the record (or with two), an unknown
 * key, a missing or empty required value, a value that does not parse, or a run whose policy differs from another
 * file's or from the lake's is a {@link BadInputException} naming the file and the key, and nothing is written. A run
 * that a results file put in the lake (CSV, JSON, Parquet: immutable) is a {@link ConflictException}. Each {@code .mcap}
 * file is one rollout (a folder is searched recursively for them, in name order).
 *
 * <p>The ingest stage also keeps the record in the episode's metadata ({@code flywheel.eval.success}, ...), as it keeps
 * every Metadata record of a recording.
 */
public final class RecordedRollouts {
    private RecordedRollouts() {}

    /** The name of the Metadata record holding a rollout's outcome. */
    public static final String METADATA = "flywheel.eval";

    /** The keys of the record, required first. */
    public static final List<String> REQUIRED = List.of("run_id", "policy_version", "task", "object", "lighting",
            "robot", "success");
    public static final List<String> OPTIONAL = List.of("scene", "duration_s", "failure_mode", "intervention");

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One recorded rollout's outcome, as read from its file.
     *
     * @param file the MCAP file
     * @param durationNs the {@code duration_s} given, in ns, or null (the episode's duration is used)
     */
    public record Outcome(Path file, String runId, String policyVersion, String task, String object, String lighting,
            String scene, String robotId, boolean success, Long durationNs, String failureMode, boolean intervention) {
        /** @return the eval row of this rollout as the lake episode {@code episodeId} */
        EvalEpisodeRow row(String episodeId, Long episodeDurationNs) {
            return new EvalEpisodeRow(runId, episodeId, task, object, lighting, scene, robotId, success,
                    durationNs != null ? durationNs : episodeDurationNs, success ? null : failureMode, intervention);
        }
    }

    /**
     * What one ingest did.
     *
     * @param files the MCAP files read
     * @param ingest what the ingest stage did with their recordings (written, skipped as already in the lake, failed)
     * @param rowsAdded eval rows committed by this call
     * @param rowsPresent eval rows that were in the lake already
     * @param runs per run of the files with a recording in the lake: its rollouts committed (or there already),
     *     successes, and how many are linked to a lake episode (all of them); a recording the ingest stage could not
     *     read is not counted, and a run none of whose recordings landed is not listed
     * @param newPolicies policies new to the lake
     * @param episodeIds file -> the lake episode id its eval row names
     */
    public record Summary(List<Path> files, IngestJob.Result ingest, long rowsAdded, long rowsPresent,
            List<Evaluations.RunSummary> runs, List<String> newPolicies, Map<Path, String> episodeIds) {}

    /**
     * @param input a {@code .mcap} file, or a folder (searched recursively)
     * @return the {@code .mcap} files, in name order
     * @throws BadInputException when a file is not named {@code .mcap} or a folder has none
     */
    public static List<Path> files(Path input) {
        if (Files.isDirectory(input)) {
            List<Path> out;
            try (java.util.stream.Stream<Path> w = Files.walk(input)) {
                out = w.filter(p -> Files.isRegularFile(p) && p.getFileName().toString().toLowerCase(Locale.ROOT)
                        .endsWith(".mcap")).sorted().toList();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (out.isEmpty()) {
                throw new BadInputException(input + ": no .mcap files (recorded eval episodes) in this folder");
            }
            return out;
        }
        if (!input.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".mcap")) {
            throw new BadInputException(input + ": not an MCAP file (expected a name ending in .mcap)");
        }
        if (!Files.isRegularFile(input)) {
            throw new io.flywheel.error.NotFoundException("no such file: " + input);
        }
        return List.of(input);
    }

    /**
     * Reads and checks the {@value #METADATA} record of one file.
     *
     * @throws BadInputException naming the file and the key; also for a file that is not a readable MCAP
     */
    public static Outcome read(Path file) {
        List<Record.Metadata> all = new ArrayList<>();
        try {
            try (McapIndexedReader in = McapIndexedReader.open(file)) {
                for (Record.MetadataIndex mi : in.metadataIndexes()) {
                    all.add(in.readMetadata(mi));
                }
            } catch (McapFormatException noSummary) { // unindexed or truncated: read the records one by one
                all.clear();
                try (McapStreamReader in = McapStreamReader.open(file, McapStreamReader.Options.builder()
                        .emitChunks(true).build())) {
                    Record r;
                    while ((r = in.next()) != null) {
                        if (r instanceof Record.Metadata m) {
                            all.add(m);
                        }
                    }
                }
            }
        } catch (McapFormatException e) {
            throw new BadInputException(file + ": not a readable MCAP file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Record.Metadata> eval = all.stream().filter(m -> m.name().equals(METADATA)).toList();
        if (eval.isEmpty()) {
            throw new BadInputException(file + ": no Metadata record named '" + METADATA + "' (a recorded rollout's"
                    + " outcome: " + String.join(", ", REQUIRED) + "; optional " + String.join(", ", OPTIONAL)
                    + "); Metadata records there: " + all.stream().map(Record.Metadata::name).toList());
        }
        if (eval.size() > 1) {
            throw new BadInputException(file + ": " + eval.size() + " Metadata records named '" + METADATA
                    + "'; a recorded rollout has one");
        }
        Map<String, String> m = new TreeMap<>(eval.get(0).metadata());
        String where = file + ": Metadata '" + METADATA + "'";
        if (m.containsKey("robot_id")) {
            if (m.containsKey("robot")) {
                throw new BadInputException(where + ": both 'robot' and 'robot_id' are given; give one");
            }
            m.put("robot", m.remove("robot_id"));
        }
        for (String k : m.keySet()) {
            if (!REQUIRED.contains(k) && !OPTIONAL.contains(k)) {
                throw new BadInputException(where + ": unknown key '" + k + "'; keys: " + String.join(", ", REQUIRED)
                        + " (required), " + String.join(", ", OPTIONAL) + " (optional)");
            }
        }
        for (String k : REQUIRED) {
            String v = m.get(k);
            if (v == null) {
                throw new BadInputException(where + ": missing key '" + k + "'");
            }
            if (v.isBlank()) {
                throw new BadInputException(where + ", key " + k + ": empty value, a value is required");
            }
        }
        Long duration = null;
        String d = blankToNull(m.get("duration_s"));
        if (d != null) {
            double s;
            try {
                s = Double.parseDouble(d.trim());
            } catch (NumberFormatException e) {
                s = Double.NaN;
            }
            if (!Double.isFinite(s)) {
                throw new BadInputException(where + ", key duration_s: '" + d + "' is not a number (seconds)");
            }
            if (s < 0) {
                throw new BadInputException(where + ", key duration_s: " + d + ": a duration cannot be negative");
            }
            duration = Math.round(s * 1e9);
        }
        String intervention = blankToNull(m.get("intervention"));
        return new Outcome(file, m.get("run_id"), m.get("policy_version"), m.get("task"), m.get("object"),
                m.get("lighting"), blankToNull(m.get("scene")), m.get("robot"), bool(where, "success", m.get("success")),
                duration, blankToNull(m.get("failure_mode")), intervention != null && bool(where, "intervention",
                intervention));
    }

    private static String blankToNull(String v) {
        return v == null || v.isBlank() ? null : v;
    }

    private static boolean bool(String where, String key, String v) {
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no" -> false;
            default -> throw new BadInputException(where + ", key " + key + ": '" + v + "' is not a boolean"
                    + " (true/false, 1/0, yes/no)");
        };
    }

    /**
     * Ingests recorded rollouts: reads and checks every readable file's outcome first (nothing is committed when one is
     * bad; a file that is not a readable MCAP, e.g. truncated, is left to the ingest stage, which reports it),
     * then ingests each recording with its eval row in one lake transaction per file, then adds the eval rows still
     * missing for recordings that were in the lake already. Recordings the ingest stage cannot read are in
     * {@link Summary#ingest()}'s failures, without eval rows; the others are committed.
     *
     * @param lake the lake
     * @param input a {@code .mcap} file or a folder of them
     * @param progress a line per recording
     * @return what was done
     * @throws BadInputException naming the file and key of a bad outcome record, or a run's second policy
     * @throws ConflictException when a run of these files was put in the lake by a results file
     */
    public static Summary ingest(Lake lake, Path input, Consumer<String> progress) throws IOException {
        List<Path> files = files(input);
        Map<Path, Outcome> byFile = new LinkedHashMap<>();
        Map<String, Outcome> firstOfRun = new LinkedHashMap<>();
        for (Path f : files) {
            Outcome o;
            try {
                o = read(f);
            } catch (BadInputException e) {
                if (e.getCause() instanceof McapFormatException) { // truncated or damaged: not a bad outcome record
                    continue; // left to the ingest stage, which reports it with its own message (README)
                }
                throw e;
            }
            Outcome first = firstOfRun.putIfAbsent(o.runId(), o);
            if (first != null && !first.policyVersion().equals(o.policyVersion())) {
                throw new BadInputException(f + ": Metadata '" + METADATA + "', key policy_version: run '" + o.runId()
                        + "' has policy '" + first.policyVersion() + "' in " + first.file() + ", not '"
                        + o.policyVersion() + "'");
            }
            byFile.put(real(f), o);
        }
        State state = new State(lake, input, firstOfRun);
        Map<Path, String> linked = new LinkedHashMap<>();
        long[] added = {0};
        RowSink sink = new RowSink() {
            @Override
            public Set<String> committedRawFiles() {
                return lake.committedRawFiles();
            }

            @Override
            public OptionalLong commit(RecordingRows rows) {
                Path f = rows.rawFiles().stream().map(r -> real(path(r.uri()))).filter(byFile::containsKey)
                        .findFirst().orElse(null);
                if (f == null || rows.episodes().size() != 1) {
                    return lake.commit(rows); // not a rollout of ours (cannot happen: one MCAP is one episode)
                }
                EpisodeRow ep = rows.episodes().get(0);
                EvalEpisodeRow row = byFile.get(f).row(ep.episodeId(), ep.durationNs());
                if (state.has(row)) {
                    return lake.commit(rows);
                }
                Change c = state.plan(List.of(row));
                OptionalLong seq = lake.commit(rows, c::addTo);
                if (seq.isPresent()) {
                    state.apply(c);
                    linked.put(f, ep.episodeId());
                    added[0]++;
                }
                return seq;
            }
        };
        IngestJob.Result result = IngestJob.run(sink, files, IngestOptions.builder().build(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), progress);
        // recordings in the lake before this run (or committed first by another writer): their eval rows, if missing
        Map<String, Path> pendingByRecording = new LinkedHashMap<>();
        for (IngestJob.RecordingResult r : result.recordings()) {
            for (String uri : r.files()) {
                Path f = real(path(uri));
                if (byFile.containsKey(f) && !linked.containsKey(f)) {
                    pendingByRecording.put(r.recordingId(), f);
                }
            }
        }
        long present = 0;
        if (!pendingByRecording.isEmpty()) {
            Map<String, EpisodeRef> episodes = episodesOf(lake, pendingByRecording.keySet());
            List<EvalEpisodeRow> rows = new ArrayList<>();
            Map<Path, String> ids = new LinkedHashMap<>();
            for (Map.Entry<String, Path> e : pendingByRecording.entrySet()) {
                EpisodeRef ep = episodes.get(e.getKey());
                if (ep == null) {
                    continue; // not in the lake after all (cannot happen for a skipped recording)
                }
                EvalEpisodeRow row = byFile.get(e.getValue()).row(ep.episodeId(), ep.durationNs());
                ids.put(e.getValue(), ep.episodeId());
                if (state.has(row) || rows.stream().anyMatch(x -> x.runId().equals(row.runId())
                        && x.episodeId().equals(row.episodeId()))) {
                    present++;
                } else {
                    rows.add(row);
                }
            }
            if (!rows.isEmpty()) {
                Change c = state.plan(rows);
                LakeTransaction tx = lake.begin("eval ingest").summary("recordings", Integer.toString(rows.size()));
                c.addTo(tx);
                long seq = tx.commit().snapshot().seq();
                state.apply(c);
                added[0] += rows.size();
                progress.accept("eval rows of " + rows.size() + " recording(s) already in the lake (lake commit " + seq
                        + ")");
            }
            linked.putAll(ids);
        }
        List<Evaluations.RunSummary> runs = new ArrayList<>();
        for (String run : firstOfRun.keySet()) {
            long n = 0;
            long ok = 0;
            long minable = 0;
            for (Map.Entry<Path, Outcome> e : byFile.entrySet()) {
                if (e.getValue().runId().equals(run) && linked.containsKey(e.getKey())) { // what is in the lake
                    n++;
                    ok += e.getValue().success() ? 1 : 0;
                    minable++;
                }
            }
            if (n == 0) {
                continue; // none of the run's recordings could be ingested: the run did not land
            }
            runs.add(new Evaluations.RunSummary(run, firstOfRun.get(run).policyVersion(), n, ok, minable));
        }
        return new Summary(files, result, added[0], present, runs, List.copyOf(state.newPolicies), linked);
    }

    private static Path path(String uri) {
        return uri.startsWith("file:") ? Path.of(URI.create(uri)) : Path.of(uri);
    }

    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }

    /** A lake episode: its id and duration (ns, or null). */
    private record EpisodeRef(String episodeId, Long durationNs) {}

    /** The episodes (id, duration) of recordings, by recording id. */
    private static Map<String, EpisodeRef> episodesOf(Lake lake, Set<String> recordingIds) {
        Map<String, EpisodeRef> out = new HashMap<>();
        if (!lake.hasTable(TableSchemas.EPISODES)) {
            return out;
        }
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            t.scan(ScanRequest.builder().columns(TableSchemas.EPISODE_ID, TableSchemas.RECORDING_ID,
                    TableSchemas.DURATION_NS).filter(Sql.in(TableSchemas.RECORDING_ID, List.copyOf(recordingIds)))
                    .build(), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            Object d = b.value(TableSchemas.DURATION_NS, i);
                            String rec = String.valueOf(b.value(TableSchemas.RECORDING_ID, i));
                            out.putIfAbsent(rec, new EpisodeRef(String.valueOf(b.value(TableSchemas.EPISODE_ID, i)),
                                    d == null ? null : ((Number) d).longValue()));
                        }
                    });
        }
        return out;
    }

    /** The eval rows of one commit: the rollouts, the new policies, and every run row after it. */
    private record Change(List<EvalEpisodeRow> rows, List<PolicyRow> newPolicies, List<EvalRunRow> runsAfter) {
        void addTo(LakeTransaction tx) {
            if (!newPolicies.isEmpty()) {
                tx.append(EvalTables.POLICIES_TABLE, newPolicies, Set.copyOf(newPolicies.stream()
                        .map(PolicyRow::policyVersion).toList()));
            }
            Set<String> runs = new HashSet<>();
            rows.forEach(r -> runs.add(r.runId()));
            tx.append(EvalTables.EVAL_EPISODES_TABLE, rows, runs).overwrite(EvalTables.EVAL_RUNS_TABLE, runsAfter)
                    .summary("eval_runs", String.join(",", runs));
        }
    }

    /** The eval tables as this call sees them: run rows, policies, the (run, episode) keys there, counts per run. */
    private static final class State {
        final Map<String, EvalRunRow> runs = new LinkedHashMap<>();
        final Set<String> policies = new HashSet<>();
        final Set<String> keys = new HashSet<>();
        final Map<String, Long> counts = new HashMap<>();
        final List<String> newPolicies = new ArrayList<>();
        final Map<String, Outcome> firstOfRun;
        final String source;
        final long now = System.currentTimeMillis() * 1_000_000L;

        State(Lake lake, Path input, Map<String, Outcome> firstOfRun) {
            this.firstOfRun = firstOfRun;
            this.source = input.toAbsolutePath().toString();
            for (EvalRunRow r : Evaluations.runs(lake)) {
                runs.put(r.runId(), r);
            }
            for (Outcome o : firstOfRun.values()) {
                EvalRunRow r = runs.get(o.runId());
                if (r == null) {
                    continue;
                }
                if (!"mcap".equals(format(r))) {
                    throw new ConflictException(o.file() + ": run '" + o.runId() + "' is in the lake already from a"
                            + " results file; such runs are immutable: record the rollouts under another run_id");
                }
                if (!r.policyVersion().equals(o.policyVersion())) {
                    throw new BadInputException(o.file() + ": Metadata '" + METADATA + "', key policy_version: run '"
                            + o.runId() + "' has policy '" + r.policyVersion() + "' in the lake, not '"
                            + o.policyVersion() + "'");
                }
            }
            if (lake.hasTable(EvalTables.POLICIES)) {
                try (LakeTable t = lake.table(EvalTables.POLICIES)) {
                    t.rows(EvalTables.POLICIES_TABLE, ScanRequest.all()).forEach(p -> policies.add(p.policyVersion()));
                }
            }
            if (lake.hasTable(EvalTables.EVAL_EPISODES)) {
                try (LakeTable t = lake.table(EvalTables.EVAL_EPISODES)) {
                    t.rows(EvalTables.EVAL_EPISODES_TABLE, ScanRequest.builder().filter(Sql.in(EvalTables.RUN_ID,
                            List.copyOf(firstOfRun.keySet()))).build()).forEach(e -> {
                                keys.add(key(e));
                                counts.merge(e.runId(), 1L, Long::sum);
                            });
                }
            }
        }

        private static String format(EvalRunRow r) {
            try {
                JsonNode c = JSON.readTree(r.configJson());
                return c.path("format").asText("");
            } catch (IOException e) {
                return "";
            }
        }

        static String key(EvalEpisodeRow e) {
            return e.runId() + "\u0000" + e.episodeId();
        }

        boolean has(EvalEpisodeRow e) {
            return keys.contains(key(e));
        }

        Change plan(List<EvalEpisodeRow> rows) {
            List<PolicyRow> pols = new ArrayList<>();
            Map<String, Long> more = new HashMap<>();
            for (EvalEpisodeRow e : rows) {
                more.merge(e.runId(), 1L, Long::sum);
                String p = firstOfRun.get(e.runId()).policyVersion();
                if (!policies.contains(p) && pols.stream().noneMatch(x -> x.policyVersion().equals(p))) {
                    pols.add(new PolicyRow(p, now, "{}"));
                }
            }
            Map<String, EvalRunRow> after = new LinkedHashMap<>(runs);
            for (Map.Entry<String, Long> m : more.entrySet()) {
                String run = m.getKey();
                long n = counts.getOrDefault(run, 0L) + m.getValue();
                EvalRunRow r = runs.get(run);
                if (r == null) {
                    Map<String, Object> cfg = new LinkedHashMap<>();
                    cfg.put("source", source);
                    cfg.put("format", "mcap");
                    String json;
                    try {
                        json = JSON.writeValueAsString(cfg);
                    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                        throw new IllegalStateException(e);
                    }
                    after.put(run, new EvalRunRow(run, firstOfRun.get(run).policyVersion(), now, json, n));
                } else {
                    after.put(run, new EvalRunRow(run, r.policyVersion(), r.startedAtNs(), r.configJson(), n));
                }
            }
            return new Change(List.copyOf(rows), pols, List.copyOf(after.values()));
        }

        void apply(Change c) {
            for (EvalEpisodeRow e : c.rows()) {
                keys.add(key(e));
                counts.merge(e.runId(), 1L, Long::sum);
            }
            for (PolicyRow p : c.newPolicies()) {
                policies.add(p.policyVersion());
                newPolicies.add(p.policyVersion());
            }
            c.runsAfter().forEach(r -> runs.put(r.runId(), r));
        }
    }
}
