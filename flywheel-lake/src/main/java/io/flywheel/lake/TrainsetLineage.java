package io.flywheel.lake;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;

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
    static final String TRAINSETS = "trainsets";
    static final String SAMPLES = "trainset_samples";
    static final String EPISODES = "trainset_episodes";
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
            Set<String> columns = new java.util.HashSet<>();
            t.schema().getFields().forEach(f -> columns.add(f.getName()));
            List<String> wanted = new ArrayList<>(List.of("tag"));
            for (String c : List.of("samples_version", "episodes_version", "lineage")) {
                if (columns.contains(c)) {
                    wanted.add(c);
                }
            }
            long[] row = {0};
            t.scan(ScanRequest.builder().columns(wanted).build(), batch -> {
                VarCharVector tag = (VarCharVector) batch.getVector("tag");
                for (int i = 0; i < batch.getRowCount(); i++, row[0]++) {
                    String set = new String(tag.get(i), StandardCharsets.UTF_8);
                    version(batch.getVector("samples_version"), i).ifPresent(v ->
                            out.add(new Pin(set, SAMPLES, v, "samples_version")));
                    version(batch.getVector("episodes_version"), i).ifPresent(v ->
                            out.add(new Pin(set, EPISODES, v, "episodes_version")));
                    if (batch.getVector("lineage") instanceof VarCharVector l && !l.isNull(i)) {
                        lineage(set, new String(l.get(i), StandardCharsets.UTF_8), t.uri(), row[0], out);
                    }
                }
            });
        }
        return out;
    }

    private static java.util.OptionalLong version(org.apache.arrow.vector.FieldVector v, int i) {
        if (v instanceof BigIntVector b && !b.isNull(i) && b.get(i) > 0) {
            return java.util.OptionalLong.of(b.get(i));
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
