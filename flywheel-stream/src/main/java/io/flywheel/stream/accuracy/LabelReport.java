package io.flywheel.stream.accuracy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import io.flywheel.lake.Lake;
import io.flywheel.lake.StreamLabelLinks;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.rules.Outcome;

/**
 * The stream labels of a lake scored against a ground truth ({@code flywheel stream report}).
 *
 * @param accuracy precision, recall and confusion counts
 * @param labels stream episodes with a current label in {@code label_history}
 * @param rulesVersions the labelling rules versions of those labels, sorted
 * @param invalidLabels labels whose value is not in the stream vocabulary (not compared)
 */
public record LabelReport(LabelAccuracy accuracy, int labels, List<String> rulesVersions, int invalidLabels) {
    public LabelReport {
        rulesVersions = List.copyOf(rulesVersions);
    }

    /**
     * @param lake the lake
     * @param truth true outcomes by {@link LabelTruth#key}
     * @return each stream episode's current label compared with the truth
     */
    public static LabelReport of(Lake lake, Map<String, Outcome> truth) {
        Map<String, Outcome> labels = new LinkedHashMap<>();
        TreeSet<String> versions = new TreeSet<>();
        List<LabelHistoryRow> current = StreamLabelLinks.currentLabels(lake);
        int invalid = 0;
        for (LabelHistoryRow r : current) {
            Outcome o = Outcome.parse(r.label());
            if (o == null) {
                invalid++;
                continue;
            }
            labels.put(LabelTruth.key(r.robotId(), r.episodeId()), o);
            versions.add(r.rulesVersion());
        }
        return new LabelReport(LabelAccuracy.of(labels, truth), current.size(), List.copyOf(versions), invalid);
    }
}
