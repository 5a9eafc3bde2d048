package io.flywheel.lake;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;

/**
 * The table versions the committed training sets read, from the training-set registry ({@code trainsets}, one row per
 * set, written by {@code io.flywheel.curate.trainset.TrainsetBuilder}): each row's {@code samples_version} of
 * {@code trainset_samples} and {@code episodes_version} of {@code trainset_episodes}, and every
 * {@code table: version} of its lineage's {@code source_versions} (and of any other lineage entry named
 * {@code *source_versions}, such as a mining run's). Cleanup keeps them all.
 */
final class TrainsetLineage {
    static final String TRAINSETS = TableSchemas.TRAINSETS;
    static final String SAMPLES = TableSchemas.TRAINSET_SAMPLES;
    static final String EPISODES = TableSchemas.TRAINSET_EPISODES;
    private static final ObjectMapper JSON = new ObjectMapper();

    private TrainsetLineage() {}

    /**
     * One version a training set reads.
     *
     * @param trainset the set's tag
     * @param table table name
     * @param version its version
     * @param why where the registry names it ({@code samples_version}, {@code lineage.source_versions}, ...)
     */
    record Pin(String trainset, String table, long version, String why) {}

    /**
     * @param lake the lake, read at its current snapshot
     * @return every version the registry's sets name; empty when no set was built
     * @throws BadInputException naming the row when a lineage is not JSON
     */
    static List<Pin> pins(Lake lake) {
        List<Pin> out = new ArrayList<>();
        if (!lake.hasTable(TRAINSETS)) {
            return out;
        }
        try (LakeTable t = lake.table(TRAINSETS)) {
            List<String> wanted = new ArrayList<>(List.of(CurationTables.TAG));
            for (String c : List.of(CurationTables.SAMPLES_VERSION, CurationTables.EPISODES_VERSION,
                    CurationTables.LINEAGE)) {
                if (t.hasColumn(c)) {
                    wanted.add(c);
                }
            }
            long[] row = {0};
            t.scan(ScanRequest.builder().columns(wanted).build(), batch -> {
                ColumnView tag = batch.column(CurationTables.TAG);
                ColumnView samples = batch.has(CurationTables.SAMPLES_VERSION)
                        ? batch.column(CurationTables.SAMPLES_VERSION) : null;
                ColumnView episodes = batch.has(CurationTables.EPISODES_VERSION)
                        ? batch.column(CurationTables.EPISODES_VERSION) : null;
                ColumnView lineage = batch.has(CurationTables.LINEAGE) ? batch.column(CurationTables.LINEAGE) : null;
                for (int i = 0; i < batch.rowCount(); i++, row[0]++) {
                    String set = tag.getString(i);
                    version(samples, i).ifPresent(v ->
                            out.add(new Pin(set, SAMPLES, v, CurationTables.SAMPLES_VERSION)));
                    version(episodes, i).ifPresent(v ->
                            out.add(new Pin(set, EPISODES, v, CurationTables.EPISODES_VERSION)));
                    if (lineage != null && lineage.kind() == ValueKind.UTF8 && !lineage.isNull(i)) {
                        lineage(set, lineage.getString(i), t.uri(), row[0], out);
                    }
                }
            });
        }
        return out;
    }

    private static java.util.OptionalLong version(ColumnView v, int i) {
        if (v != null && v.kind() == ValueKind.INT64 && !v.isNull(i) && v.getLong(i) > 0) {
            return java.util.OptionalLong.of(v.getLong(i));
        }
        return java.util.OptionalLong.empty();
    }

    private static void lineage(String set, String json, String uri, long row, List<Pin> out) {
        JsonNode n;
        try {
            n = JSON.readTree(json);
        } catch (java.io.IOException e) {
            throw new BadInputException("training-set registry " + uri + ", row " + row + " ('" + set
                    + "'): lineage is not JSON: " + e.getMessage(), e);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getKey().endsWith("source_versions") || !e.getValue().isObject()) {
                continue;
            }
            for (Iterator<Map.Entry<String, JsonNode>> v = e.getValue().fields(); v.hasNext(); ) {
                Map.Entry<String, JsonNode> tv = v.next();
                if (tv.getValue().canConvertToLong() && tv.getValue().asLong() > 0) {
                    out.add(new Pin(set, tv.getKey(), tv.getValue().asLong(), "lineage." + e.getKey()));
                }
            }
        }
    }
}
