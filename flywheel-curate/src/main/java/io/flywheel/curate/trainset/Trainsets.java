package io.flywheel.curate.trainset;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.ColumnView;
import io.flywheel.lake.CurationTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableRef;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.TrainsetEpisodeRow;
import io.flywheel.rows.TrainsetRow;

/** Reads the training sets of a lake: list, find by tag, their episodes. */
public final class Trainsets {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Trainsets() {}

    /** @return every committed training set, oldest first (empty when none was built) */
    public static List<Trainset> list(Lake lake) {
        List<Trainset> out = new ArrayList<>();
        if (!lake.hasTable(TrainsetTables.TRAINSETS)) {
            return out;
        }
        try (LakeTable t = lake.table(TrainsetTables.TRAINSETS)) {
            List<TrainsetRow> rows = t.rows(CurationTables.TRAINSETS, ScanRequest.all());
            for (int i = 0; i < rows.size(); i++) {
                out.add(trainset(lake, rows.get(i), i));
            }
        }
        out.sort(Comparator.comparingLong(Trainset::createdAtNs).thenComparing(Trainset::tag));
        return out;
    }

    /** @return the set with this tag, if committed */
    public static Optional<Trainset> find(Lake lake, String tag) {
        return list(lake).stream().filter(s -> s.tag().equals(tag)).findFirst();
    }

    /**
     * @return the set with this tag
     * @throws io.flywheel.error.NotFoundException naming the tags that exist, when there is no such set
     */
    public static Trainset open(Lake lake, String tag) {
        List<Trainset> all = list(lake);
        for (Trainset s : all) {
            if (s.tag().equals(tag)) {
                return s;
            }
        }
        throw new io.flywheel.error.NotFoundException("no training set '" + tag + "' in " + lake.location() + "; "
                + (all.isEmpty() ? "none was built yet (flywheel trainset build)"
                        : "tags: " + all.stream().map(Trainset::tag).toList()));
    }

    /** @return the episodes of a set, in set order */
    public static List<TrainsetEpisode> episodes(Lake lake, Trainset set) {
        List<TrainsetEpisode> out = new ArrayList<>();
        try (LakeTable t = lake.table(TrainsetTables.EPISODES, TableRef.version(set.episodesVersion()))) {
            for (TrainsetEpisodeRow r : t.rows(CurationTables.TRAINSET_EPISODES, ScanRequest.all())) {
                String id = r.episodeId();
                EpisodeInfo info = new EpisodeInfo(id, orEmpty(r.robotId()), orEmpty(r.task()), orEmpty(r.scene()),
                        orEmpty(r.object()), orEmpty(r.outcome()), "", null);
                List<MinedEpisode> by = new ArrayList<>();
                for (TrainsetEpisodeRow.MinedBy m : r.minedBy()) {
                    by.add(new MinedEpisode(id, m.queryEpisodeId(), m.distance(), m.rank()));
                }
                out.add(new TrainsetEpisode(r.episodeIndex(), info, r.inBase(), by, r.firstSample(), r.sampleCount()));
            }
        }
        out.sort(Comparator.comparingInt(TrainsetEpisode::episodeIndex));
        return out;
    }

    /**
     * The value names of episodes ({@code episodes.state_names}, {@code action_names}, at the lake's current
     * snapshot: an episode's names are fixed at its ingest).
     *
     * @param lake an open lake
     * @param episodeIds the episodes
     * @return episode id to its names; an episode absent from the table, or ingested before names were stored, maps
     *     to {@link ValueNames#NONE}
     */
    public static Map<String, ValueNames> valueNames(Lake lake, java.util.Collection<String> episodeIds) {
        Map<String, ValueNames> out = new LinkedHashMap<>();
        List<String> ids = new ArrayList<>(new java.util.LinkedHashSet<>(episodeIds));
        ids.forEach(id -> out.put(id, ValueNames.NONE));
        try (LakeTable t = lake.table(io.flywheel.lake.TableSchemas.EPISODES)) {
            if (!t.hasColumn(io.flywheel.lake.TableSchemas.STATE_NAMES)) {
                return out;
            }
            for (int from = 0; from < ids.size(); from += 500) {
                List<String> part = ids.subList(from, Math.min(ids.size(), from + 500));
                for (io.flywheel.rows.EpisodeRow r : t.episodes(ScanRequest.builder()
                        .filter(Sql.in("episode_id", part)).build())) {
                    out.put(r.episodeId(), new ValueNames(r.stateNames(), r.actionNames()));
                }
            }
        }
        return out;
    }

    /** The lineage key of the set's value names ({@link #valueNamesLineage}). */
    public static final String VALUE_NAMES = "value_names";

    /**
     * The value names of a set's episodes as its lineage keeps them, so that a reader of the set finds them in the
     * set itself (as it was built, and in what {@code warm} fetches): one entry per distinct layout,
     * {@code {"state": [...], "action": [...], "episode_count": n}}, with {@code "episode_ids"} when the episodes
     * have more than one layout. Episodes whose names are unknown are left out.
     *
     * @param names per episode, as {@link #valueNames(Lake, java.util.Collection)} reads them
     * @return the lineage value
     */
    public static List<Map<String, Object>> valueNamesLineage(Map<String, ValueNames> names) {
        Map<ValueNames, List<String>> byLayout = new LinkedHashMap<>();
        names.forEach((id, n) -> {
            if (!n.equals(ValueNames.NONE)) {
                byLayout.computeIfAbsent(n, k -> new ArrayList<>()).add(id);
            }
        });
        List<Map<String, Object>> out = new ArrayList<>();
        byLayout.forEach((n, ids) -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("state", n.state());
            m.put("action", n.action());
            m.put("episode_count", ids.size());
            if (byLayout.size() > 1) {
                m.put("episode_ids", ids);
            }
            out.add(m);
        });
        return out;
    }

    /**
     * @param set a training set
     * @param episodeId one of its episodes
     * @return the episode's value names from the set's lineage ({@link #valueNamesLineage}); {@link ValueNames#NONE}
     *     when unknown; empty when the set was built before its lineage kept them
     */
    @SuppressWarnings("unchecked")
    public static java.util.Optional<ValueNames> valueNames(Trainset set, String episodeId) {
        Object v = set.lineage().get(VALUE_NAMES);
        if (!(v instanceof List<?> layouts)) {
            return java.util.Optional.empty();
        }
        for (Object o : layouts) {
            Map<String, Object> m = (Map<String, Object>) o;
            Object ids = m.get("episode_ids");
            if (ids == null || ((List<Object>) ids).contains(episodeId)) {
                return java.util.Optional.of(new ValueNames((List<String>) m.get("state"), (List<String>) m.get("action")));
            }
        }
        return java.util.Optional.of(ValueNames.NONE);
    }

    /**
     * Reads the descriptive fields of every episode of an episodes table (the object comes from
     * the metadata JSON key {@code object}); duplicate_of comes from the lake's
     * {@code episode_groups} table when a dedup ran. The outcome is the effective one: the stream's label
     * ({@code stream_outcome}) when the episode has one, else the recording's ({@code outcome}).
     */
    public static Map<String, EpisodeInfo> episodeInfos(Lake lake, LakeTable episodes) {
        Map<String, String> dup = io.flywheel.curate.pool.DedupTables.representatives(lake);
        Map<String, EpisodeInfo> out = new LinkedHashMap<>();
        boolean stream = episodes.hasColumn(TableSchemas.STREAM_OUTCOME);
        List<String> columns = new ArrayList<>(List.of("episode_id", "robot_id", "task", "scene", "outcome",
                "quality_status", "metadata"));
        if (stream) {
            columns.add(TableSchemas.STREAM_OUTCOME);
        }
        episodes.scan(ScanRequest.builder().columns(columns).build(), batch -> {
            ColumnView episodeId = batch.column("episode_id");
            ColumnView robot = batch.column("robot_id");
            ColumnView task = batch.column("task");
            ColumnView scene = batch.column("scene");
            ColumnView outcome = batch.column("outcome");
            ColumnView quality = batch.column("quality_status");
            ColumnView metadata = batch.column("metadata");
            ColumnView streamOutcome = stream ? batch.column(TableSchemas.STREAM_OUTCOME) : null;
            for (int i = 0; i < batch.rowCount(); i++) {
                String id = orEmpty(episodeId.getString(i));
                out.put(id, new EpisodeInfo(id, orEmpty(robot.getString(i)), orEmpty(task.getString(i)),
                        orEmpty(scene.getString(i)), object(orEmpty(metadata.getString(i))),
                        orEmpty(EpisodeRow.effectiveOutcome(outcome.getString(i),
                                streamOutcome == null ? null : streamOutcome.getString(i))),
                        orEmpty(quality.getString(i)), dup.get(id)));
            }
        });
        return out;
    }

    /**
     * What the stream labelling contributed to the outcomes read from an episodes table, for a training set's lineage.
     *
     * @return null when the lake has no {@code label_history}; else {@code rules_versions} (the sorted distinct
     *     {@code stream_rules_version} of the table's episodes: the labelling rules whose labels the set saw),
     *     {@code labelled_episodes} (episodes with a stream label), {@code outcomes_from_stream} (of those, by
     *     outcome) and {@code label_history_version} (the version of {@code label_history} at the build)
     */
    public static Map<String, Object> labelling(Lake lake, LakeTable episodes) {
        if (!lake.hasTable(io.flywheel.lake.StreamTables.LABEL_HISTORY)) {
            return null;
        }
        long historyVersion;
        try (LakeTable h = lake.table(io.flywheel.lake.StreamTables.LABEL_HISTORY)) {
            historyVersion = h.version();
        }
        java.util.TreeSet<String> versions = new java.util.TreeSet<>();
        Map<String, Long> byOutcome = new java.util.TreeMap<>();
        long[] labelled = {0};
        if (episodes.hasColumn(TableSchemas.STREAM_OUTCOME)) {
            episodes.scan(ScanRequest.builder().columns(TableSchemas.STREAM_OUTCOME, TableSchemas.STREAM_RULES_VERSION)
                    .filter(TableSchemas.STREAM_OUTCOME + " IS NOT NULL").build(), b -> {
                        ColumnView o = b.column(TableSchemas.STREAM_OUTCOME);
                        ColumnView v = b.column(TableSchemas.STREAM_RULES_VERSION);
                        for (int i = 0; i < b.rowCount(); i++) {
                            labelled[0]++;
                            byOutcome.merge(orEmpty(o.getString(i)), 1L, Long::sum);
                            if (v.getString(i) != null) {
                                versions.add(v.getString(i));
                            }
                        }
                    });
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("rules_versions", List.copyOf(versions));
        out.put("labelled_episodes", labelled[0]);
        out.put("outcomes_from_stream", byOutcome);
        out.put("label_history_version", historyVersion);
        return out;
    }

    /** @return the set's row of the trainsets table (its versions: -1, the set's lake tag pins them) */
    static TrainsetRow registryRow(Trainset s) {
        return new TrainsetRow(s.tag(), s.createdAtNs(), s.samplesVersion(), s.episodesVersion(), s.episodeCount(),
                s.sampleCount(), s.baseCount(), s.minedCount(), TrainsetBuilder.json(s.lineage()));
    }

    /** @param i the row's position in the registry, for the message when its lineage is not JSON */
    private static Trainset trainset(Lake lake, TrainsetRow r, int i) {
        Map<String, Object> lineage;
        try {
            lineage = JSON.readValue(r.lineageJson(), new TypeReference<LinkedHashMap<String, Object>>() {});
        } catch (IOException e) {
            throw new io.flywheel.error.BadInputException("trainsets row " + i + ": lineage is not JSON: "
                    + e.getMessage(), e);
        }
        long samples = r.samplesVersion();
        long episodes = r.episodesVersion();
        Map<String, Long> pinned = lake.snapshot().tags().get(r.tag());
        if (pinned != null) { // the set's lake tag is the truth (rows written in the same commit say -1)
            samples = pinned.getOrDefault(TrainsetTables.SAMPLES, samples);
            episodes = pinned.getOrDefault(TrainsetTables.EPISODES, episodes);
        }
        return new Trainset(r.tag(), r.createdAtNs(), samples, episodes, r.episodeCount(), r.sampleCount(),
                r.baseCount(), r.minedCount(), lineage);
    }

    private static String object(String metadataJson) {
        if (metadataJson.isEmpty()) {
            return "";
        }
        try {
            var node = JSON.readTree(metadataJson).get("object");
            return node == null || node.isNull() ? "" : node.asText();
        } catch (IOException e) {
            return "";
        }
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /** @return a Lance filter selecting these episode ids (for callers scanning frames or episodes) */
    static String episodeFilter(List<String> ids) {
        return Sql.in("episode_id", ids);
    }
}
