package io.flywheel.curate.quality;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;

/**
 * The quality status and flags stored on {@code episodes} ({@code flywheel qc report} without {@code --rules}): the
 * episodes, optionally of one status, with counts per status and per fired rule.
 *
 * @param episodes the episodes, in episode-id order
 * @param byStatus episodes per stored status, sorted by status (key {@code "null"} for episodes no rules ran on)
 * @param byRule episodes per fired rule id (a flag), sorted by rule id
 */
public record StoredQuality(List<EpisodeRow> episodes, Map<String, Long> byStatus, Map<String, Long> byRule) {
    /** The values of {@code episodes.quality_status}. */
    public static final Set<String> STATUSES = Set.of("pass", "warn", "fail");

    public StoredQuality {
        episodes = List.copyOf(episodes);
        byStatus = Collections.unmodifiableMap(new TreeMap<>(byStatus));
        byRule = Collections.unmodifiableMap(new TreeMap<>(byRule));
    }

    /**
     * @param lake an open lake
     * @param status only episodes with this status ({@code pass}, {@code warn} or {@code fail}), or null for all
     * @return the episodes and their counts
     * @throws IllegalArgumentException for another status
     */
    public static StoredQuality read(Lake lake, String status) {
        if (status != null && !STATUSES.contains(status)) {
            throw new IllegalArgumentException("quality status '" + status + "': expected pass, warn or fail");
        }
        List<EpisodeRow> rows;
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            ScanRequest.Builder b = ScanRequest.builder();
            if (status != null) {
                b.filter(TableSchemas.QUALITY_STATUS + " = " + Sql.quote(status));
            }
            rows = new ArrayList<>(t.episodes(b.build()));
        }
        rows.sort((a, b) -> a.episodeId().compareTo(b.episodeId()));
        Map<String, Long> byStatus = new TreeMap<>();
        Map<String, Long> byRule = new TreeMap<>();
        for (EpisodeRow r : rows) {
            byStatus.merge(String.valueOf(r.qualityStatus()), 1L, Long::sum);
            for (String f : r.qualityFlags() == null ? List.<String>of() : r.qualityFlags()) {
                byRule.merge(f, 1L, Long::sum);
            }
        }
        return new StoredQuality(rows, byStatus, byRule);
    }
}
