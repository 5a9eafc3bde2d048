package io.flywheel.curate.trainset;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.BatchSource;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableRef;

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
            t.scan(ScanRequest.all(), batch -> {
                for (int i = 0; i < batch.getRowCount(); i++) {
                    out.add(row(lake, batch, i));
                }
            });
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
            t.scan(ScanRequest.all(), batch -> {
                ListVector mined = (ListVector) batch.getVector("mined_by");
                StructVector item = (StructVector) mined.getDataVector();
                VarCharVector q = (VarCharVector) item.getChild("query_episode_id");
                Float8Vector d = (Float8Vector) item.getChild("distance");
                IntVector rank = (IntVector) item.getChild("rank");
                for (int i = 0; i < batch.getRowCount(); i++) {
                    String id = str(batch, "episode_id", i);
                    EpisodeInfo info = new EpisodeInfo(id, str(batch, "robot_id", i), str(batch, "task", i),
                            str(batch, "scene", i), str(batch, "object", i), str(batch, "outcome", i), "", null);
                    List<MinedEpisode> by = new ArrayList<>();
                    int start = mined.getElementStartIndex(i);
                    int end = mined.getElementEndIndex(i);
                    for (int c = start; c < end; c++) {
                        by.add(new MinedEpisode(id, new String(q.get(c), StandardCharsets.UTF_8), d.get(c), rank.get(c)));
                    }
                    out.add(new TrainsetEpisode(((IntVector) batch.getVector("episode_index")).get(i), info,
                            ((BitVector) batch.getVector("in_base")).get(i) == 1, by,
                            ((BigIntVector) batch.getVector("first_sample")).get(i),
                            ((BigIntVector) batch.getVector("sample_count")).get(i)));
                }
            });
        }
        out.sort(Comparator.comparingInt(TrainsetEpisode::episodeIndex));
        return out;
    }

    /**
     * Reads the descriptive fields of every episode of an episodes table (the object comes from
     * the metadata JSON key {@code object}); duplicate_of comes from the lake's
     * {@code episode_groups} table when a dedup ran.
     */
    public static Map<String, EpisodeInfo> episodeInfos(Lake lake, LakeTable episodes) {
        Map<String, String> dup = io.flywheel.curate.pool.DedupTables.representatives(lake);
        Map<String, EpisodeInfo> out = new LinkedHashMap<>();
        episodes.scan(ScanRequest.builder().columns("episode_id", "robot_id", "task", "scene", "outcome", "quality_status",
                "metadata").build(), batch -> {
            for (int i = 0; i < batch.getRowCount(); i++) {
                String id = str(batch, "episode_id", i);
                out.put(id, new EpisodeInfo(id, str(batch, "robot_id", i), str(batch, "task", i),
                        str(batch, "scene", i), object(str(batch, "metadata", i)), str(batch, "outcome", i),
                        str(batch, "quality_status", i), dup.get(id)));
            }
        });
        return out;
    }

    /** @return the set's row of the trainsets table (its versions: -1, the set's lake tag pins them) */
    static BatchSource registryRow(Trainset s, BufferAllocator alloc) {
        return BatchSource.single(TrainsetTables.TRAINSETS_SCHEMA, alloc, root -> {
            TrainsetBuilder.str(root, "tag", 0, s.tag());
            i64(root, "created_at_ns", s.createdAtNs());
            i64(root, "samples_version", s.samplesVersion());
            i64(root, "episodes_version", s.episodesVersion());
            i64(root, "episode_count", s.episodeCount());
            i64(root, "sample_count", s.sampleCount());
            i64(root, "base_count", s.baseCount());
            i64(root, "mined_count", s.minedCount());
            TrainsetBuilder.str(root, "lineage", 0, TrainsetBuilder.json(s.lineage()));
            root.setRowCount(1);
        });
    }

    private static Trainset row(Lake lake, VectorSchemaRoot b, int i) {
        Map<String, Object> lineage;
        try {
            lineage = JSON.readValue(str(b, "lineage", i), new TypeReference<LinkedHashMap<String, Object>>() {});
        } catch (IOException e) {
            throw new io.flywheel.error.BadInputException("trainsets row " + i + ": lineage is not JSON: "
                    + e.getMessage(), e);
        }
        String tag = str(b, "tag", i);
        long samples = i64(b, "samples_version", i);
        long episodes = i64(b, "episodes_version", i);
        Map<String, Long> pinned = lake.snapshot().tags().get(tag);
        if (pinned != null) { // the set's lake tag is the truth (rows written in the same commit say -1)
            samples = pinned.getOrDefault(TrainsetTables.SAMPLES, samples);
            episodes = pinned.getOrDefault(TrainsetTables.EPISODES, episodes);
        }
        return new Trainset(tag, i64(b, "created_at_ns", i), samples, episodes, i64(b, "episode_count", i),
                i64(b, "sample_count", i), i64(b, "base_count", i), i64(b, "mined_count", i), lineage);
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

    static String str(VectorSchemaRoot b, String col, int i) {
        String s = nullable(b, col, i);
        return s == null ? "" : s;
    }

    static String nullable(VectorSchemaRoot b, String col, int i) {
        FieldVector v = b.getVector(col);
        return v.isNull(i) ? null : new String(((VarCharVector) v).get(i), StandardCharsets.UTF_8);
    }

    private static long i64(VectorSchemaRoot b, String col, int i) {
        return ((BigIntVector) b.getVector(col)).get(i);
    }

    private static void i64(VectorSchemaRoot root, String col, long v) {
        ((BigIntVector) root.getVector(col)).setSafe(0, v);
    }

    /** @return a Lance filter selecting these episode ids (for callers scanning frames or episodes) */
    static String episodeFilter(List<String> ids) {
        return Sql.in("episode_id", ids);
    }
}
