package io.flywheel.curate.quality;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.curate.SourceFiles;
import io.flywheel.error.BadInputException;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.quality.EpisodeMetrics;
import io.flywheel.quality.QualityReport;
import io.flywheel.quality.RuleResult;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;

/**
 * Quality re-evaluation: the episode metrics ingest stored in {@code episodes.quality_metrics} evaluated with another
 * rule file, without re-ingesting ({@code flywheel qc report --rules}); {@link #commit} writes the new status, flags
 * and rule results as one column-scoped update of {@link TableSchemas#QUALITY_COLUMNS} ({@code qc --apply}), so the
 * embeddings, enrichment and labels of every episode keep their bytes.
 *
 * <p>Stored metrics: {@code quality_metrics} is a JSON object whose {@code metrics} is an {@link EpisodeMetrics} (Jackson's
 * default, camelCase field names, as ingest writes it). A committed re-evaluation keeps {@code metrics} and replaces
 * {@code results} (the {@link RuleResult}s under the new rules) and {@code rules} (the rule file's source).
 */
public final class QualityReevaluation {
    /** Reads and writes {@code quality_metrics} with Jackson's default, camelCase field names, as ingest does. */
    private static final ObjectMapper METRICS = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /**
     * One episode re-evaluated.
     *
     * @param episodeId the episode
     * @param sourceFiles its raw file names (no folder), in recording order
     * @param oldStatus status stored in the lake ({@code pass}, {@code warn}, {@code fail}, or null before rules ran)
     * @param status status under the new rules
     * @param oldFlags flags stored (empty when none)
     * @param flags flags under the new rules: ids of the rules that failed
     * @param changed status or flags differ
     * @param messages one line per rule that failed under the new rules (the rule's message with the value)
     */
    public record Episode(String episodeId, List<String> sourceFiles, String oldStatus, String status,
                          List<String> oldFlags, List<String> flags, boolean changed, List<String> messages) {
        public Episode {
            sourceFiles = List.copyOf(sourceFiles);
            oldFlags = List.copyOf(oldFlags);
            flags = List.copyOf(flags);
            messages = List.copyOf(messages);
        }
    }

    private final String rules;
    private final List<Episode> episodes;
    private final Map<String, Long> byStatus;
    private final Map<String, Long> statusChanges;
    private final long episodesVersion;
    private final List<EpisodeRow> updates;

    private QualityReevaluation(String rules, List<Episode> episodes, Map<String, Long> byStatus,
                                Map<String, Long> statusChanges, long episodesVersion, List<EpisodeRow> updates) {
        this.rules = rules;
        this.episodes = List.copyOf(episodes);
        this.byStatus = Collections.unmodifiableMap(new TreeMap<>(byStatus));
        this.statusChanges = Collections.unmodifiableMap(new TreeMap<>(statusChanges));
        this.episodesVersion = episodesVersion;
        this.updates = List.copyOf(updates);
    }

    /**
     * Re-evaluates every episode of the lake's current snapshot (read-only).
     *
     * @param lake an open lake
     * @param ruleSet the rules to apply
     * @return the episodes in episode-id order, with their old and new status
     * @throws BadInputException naming the lake and the episode when an episode's stored {@code quality_metrics}
     *     cannot be read as episode metrics (it has to be re-ingested)
     */
    public static QualityReevaluation evaluate(Lake lake, RuleSet ruleSet) {
        List<EpisodeRow> rows;
        long version;
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            rows = new ArrayList<>(t.episodes(ScanRequest.all()));
            version = t.version();
        }
        rows.sort((a, b) -> a.episodeId().compareTo(b.episodeId()));
        List<Episode> out = new ArrayList<>();
        List<EpisodeRow> updates = new ArrayList<>();
        Map<String, Long> byStatus = new TreeMap<>();
        Map<String, Long> transitions = new TreeMap<>();
        for (EpisodeRow r : rows) {
            JsonNode stored = storedMetrics(lake, r);
            EpisodeMetrics m;
            try {
                m = METRICS.treeToValue(stored, EpisodeMetrics.class);
            } catch (JsonProcessingException | RuntimeException e) {
                throw unreadable(lake, r, e);
            }
            QualityReport q = ruleSet.evaluate(m);
            String status = q.status().name().toLowerCase(Locale.ROOT);
            List<String> oldFlags = r.qualityFlags() == null ? List.of() : r.qualityFlags();
            boolean changed = !status.equals(r.qualityStatus()) || !q.flags().equals(oldFlags);
            List<String> msgs = new ArrayList<>();
            for (RuleResult rr : q.results()) {
                if (rr.outcome() == RuleResult.Outcome.FAIL) {
                    msgs.add(rr.message());
                }
            }
            byStatus.merge(status, 1L, Long::sum);
            if (!status.equals(r.qualityStatus())) {
                transitions.merge(r.qualityStatus() + " -> " + status, 1L, Long::sum);
            }
            out.add(new Episode(r.episodeId(), SourceFiles.names(r.metadataJson()), r.qualityStatus(), status, oldFlags,
                    q.flags(), changed, msgs));
            Map<String, Object> qm = new LinkedHashMap<>();
            qm.put("metrics", stored);
            qm.put("results", q.results());
            qm.put("rules", ruleSet.source());
            String json;
            try {
                json = METRICS.writeValueAsString(qm);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("quality results of " + r.episodeId() + " cannot be written as JSON", e);
            }
            // the update row carries the key and the quality columns; the column-scoped update reads only those
            updates.add(new EpisodeRow(r.episodeId(), r.recordingId(), r.robotId(), r.task(), r.scene(), r.operator(),
                    r.outcome(), r.startNs(), r.endNs(), r.durationNs(), r.masterTopic(), r.frameCount(), status,
                    q.flags(), json, r.metadataJson()));
        }
        return new QualityReevaluation(ruleSet.source(), out, byStatus, transitions, version, updates);
    }

    /** @return the {@code metrics} object of the episode's stored quality_metrics */
    private static JsonNode storedMetrics(Lake lake, EpisodeRow r) {
        JsonNode stored;
        try {
            stored = METRICS.readTree(r.qualityMetricsJson() == null ? "" : r.qualityMetricsJson());
        } catch (IOException e) {
            throw unreadable(lake, r, e);
        }
        if (stored == null || !stored.has("metrics")) {
            throw unreadable(lake, r, new IllegalStateException("no \"metrics\" object"));
        }
        return stored.get("metrics");
    }

    private static BadInputException unreadable(Lake lake, EpisodeRow r, Exception e) {
        String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage().lines().findFirst().orElse("");
        return new BadInputException(lake.location() + ": episode " + r.episodeId() + ": stored "
                + TableSchemas.QUALITY_METRICS + " cannot be read as episode metrics (" + why + "); re-ingest it", e);
    }

    /**
     * Commits the new status, flags and rule results of every episode, in one lake transaction ({@code qc}) that
     * updates {@link TableSchemas#QUALITY_COLUMNS} only. A re-evaluation that changes no episode's status or flags
     * commits nothing (no empty version).
     *
     * @param lake the lake it was evaluated on
     * @return the new version of {@code episodes}, or empty when nothing changed
     * @throws io.flywheel.lake.CommitConflictException when an episode was replaced (re-ingested) or its quality
     *     columns written since the evaluation; nothing is committed then
     */
    public OptionalLong commit(Lake lake) {
        if (changedCount() == 0) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(lake.begin("qc").summary("rules", rules)
                .updateEpisodes(TableSchemas.QUALITY_COLUMNS, updates).commit().table(TableSchemas.EPISODES)
                .toVersion());
    }

    /** @return the rule file's source, as {@link RuleSet#source()} */
    public String rules() {
        return rules;
    }

    /** @return every episode, in episode-id order */
    public List<Episode> episodes() {
        return episodes;
    }

    /** @return episodes per new status ({@code pass}, {@code warn}, {@code fail}), sorted by status */
    public Map<String, Long> byStatus() {
        return byStatus;
    }

    /** @return episodes per status change, {@code "old -> new"} (old {@code null} before rules ran), sorted */
    public Map<String, Long> statusChanges() {
        return statusChanges;
    }

    /** @return how many episodes change status or flags */
    public long changedCount() {
        return episodes.stream().filter(Episode::changed).count();
    }

    /** @return the version of {@code episodes} the stored metrics were read from */
    public long episodesVersion() {
        return episodesVersion;
    }
}
