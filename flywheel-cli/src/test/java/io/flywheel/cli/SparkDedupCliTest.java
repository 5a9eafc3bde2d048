package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.pool.DedupTables;
import io.flywheel.curate.pool.EpisodeVectors;
import io.flywheel.lake.CurationTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeSnapshot;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.testkit.SharedData;

/**
 * {@code spark dedup} on local[2] writes the groups {@code dedup} writes on the same lake (the 25 real BridgeData
 * episodes, enriched with the reference model: master-camera pHashes and episode embeddings), in one lake commit;
 * every two members of a group are within the threshold (checked on the stored pHashes and embeddings).
 */
class SparkDedupCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void sparkDedupWritesTheGroupsOfDedupInOneCommit(@TempDir Path tmp) throws Exception {
        Path a = EnrichCliTest.bridgeLake(tmp);
        String model = SharedData.shared("models/mobilenet_v2_block10_gap.onnx").toString();
        CliRun enrich = CliRun.of("enrich", a.toString(), "--threads", "2", "--model", model);
        assertEquals(0, enrich.exitCode(), enrich.err());
        Path b = tmp.resolve("lake-b");
        copyTree(a, b);

        // an episode threshold at the 10th percentile of the pairwise distances: some episodes merge, not all
        double threshold;
        try (Lake l = Lake.open(a.toString())) {
            float[][] v = EpisodeVectors.read(l).vectors();
            double[] d = new double[v.length * (v.length - 1) / 2];
            int n = 0;
            for (int i = 0; i < v.length; i++) {
                for (int j = i + 1; j < v.length; j++) {
                    d[n++] = ExactSearch.cosineDistance(v[i], v[j]);
                }
            }
            Arrays.sort(d);
            threshold = d[d.length / 10];
        }
        String t = String.valueOf(threshold);
        CliRun one = CliRun.of("dedup", a.toString(), "--episode-threshold", t, "--frame-threshold", "6", "--json");
        assertEquals(0, one.exitCode(), one.err());
        CliRun sp = CliRun.of("spark", "dedup", b.toString(), "--master", "local[2]", "--episode-threshold", t,
                "--frame-threshold", "6", "--json");
        assertEquals(0, sp.exitCode(), sp.err());
        JsonNode x = JSON.readTree(one.out());
        JsonNode y = JSON.readTree(sp.out());
        for (String k : List.of("episodes", "episode_groups", "episodes_removed", "frames", "frame_groups",
                "frames_removed", "embedding_model")) {
            assertEquals(x.path(k), y.path(k), k);
        }
        assertEquals(25, y.path("episodes").asInt());
        int groups = y.path("episode_groups").asInt();
        assertTrue(groups > 1 && groups < 25, "episode groups " + groups);
        assertTrue(y.path("frames_removed").asInt() > 0, "near-duplicate frames: " + y);
        assertTrue(y.path("frame_pairs").asLong() > 0 && y.path("episode_pairs").asLong() > 0, y.toString());

        assertEquals(episodeRows(a), episodeRows(b));
        assertEquals(frameRows(a), frameRows(b));
        // complete linkage, checked on the hashes: every two frames of a group within 6 bits (no chain)
        Map<String, Long> hash = new HashMap<>();
        Map<String, String> master = new HashMap<>();
        try (Lake l = Lake.open(b.toString()); LakeTable te = l.table(TableSchemas.EPISODES);
                LakeTable tf = l.table(TableSchemas.FRAMES)) {
            te.episodes(ScanRequest.all()).forEach(e -> master.put(e.episodeId(), e.masterTopic()));
            tf.frames(ScanRequest.all()).forEach(f -> {
                int cam = 0; // the master clock's camera (the first one for a fixed-rate clock)
                for (int i = 0; i < f.images().size(); i++) {
                    if (f.images().get(i).topic().equals(master.get(f.episodeId()))) {
                        cam = i;
                    }
                }
                hash.put(f.episodeId() + "#" + f.frameIndex(), f.enrichment().get(cam).phash());
            });
        }
        Map<String, List<String>> members = new HashMap<>();
        for (String r : frameRows(b)) {
            String[] c = r.split("\t");
            members.computeIfAbsent(c[2] + "#" + c[3], k -> new ArrayList<>(List.of(k))).add(c[0] + "#" + c[1]);
        }
        int checked = 0;
        for (List<String> g : members.values()) {
            for (int i = 0; i < g.size(); i++) {
                for (int j = i + 1; j < g.size(); j++) {
                    int d = Long.bitCount(hash.get(g.get(i)) ^ hash.get(g.get(j)));
                    assertTrue(d <= 6, g.get(i) + " and " + g.get(j) + " are " + d + " bits apart in one group");
                    checked++;
                }
            }
        }
        assertTrue(checked > 192, "member pairs checked: " + checked);
        // and every two episodes of a group within the cosine threshold
        try (Lake l = Lake.open(b.toString())) {
            EpisodeVectors ev = EpisodeVectors.read(l);
            Map<String, List<String>> eg = new HashMap<>();
            DedupTables.representatives(l).forEach((e, rep) -> eg.computeIfAbsent(rep, k -> new ArrayList<>()).add(e));
            assertEquals(groups, eg.size());
            for (List<String> g : eg.values()) {
                for (int i = 0; i < g.size(); i++) {
                    for (int j = i + 1; j < g.size(); j++) {
                        float d = ExactSearch.cosineDistance(ev.vectors()[ev.indexOf(g.get(i))],
                                ev.vectors()[ev.indexOf(g.get(j))]);
                        assertTrue(d <= threshold, g.get(i) + " and " + g.get(j) + ": cosine distance " + d);
                    }
                }
            }
        }
        try (Lake l = Lake.open(b.toString())) {
            List<LakeSnapshot> log = l.log(100);
            assertEquals(1, log.stream().filter(s -> s.operation().equals("dedup")).count(), "one dedup commit");
            assertEquals("dedup", log.get(0).operation());
        }
        // a wrong master is wrong usage
        CliRun bad = CliRun.of("spark", "dedup", b.toString(), "--master", "mesos://x");
        assertEquals(2, bad.exitCode(), bad.err());
        assertFalse(bad.err().isEmpty());
    }

    private static Set<String> episodeRows(Path lake) {
        Set<String> out = new TreeSet<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table(DedupTables.EPISODE_GROUPS)) {
            t.forEachRow(CurationTables.EPISODE_GROUPS, ScanRequest.all(), r -> out.add(r.episodeId() + "\t"
                    + r.representativeId() + "\t" + r.distance() + "\t" + r.groupSize() + "\t" + r.threshold() + "\t"
                    + r.embeddingModel()));
        }
        return out;
    }

    private static Set<String> frameRows(Path lake) {
        Set<String> out = new TreeSet<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table(DedupTables.FRAME_GROUPS)) {
            t.forEachRow(CurationTables.FRAME_GROUPS, ScanRequest.all(), r -> out.add(r.episodeId() + "\t"
                    + r.frameIndex() + "\t" + r.representativeEpisodeId() + "\t" + r.representativeFrameIndex() + "\t"
                    + r.hamming() + "\t" + r.threshold()));
        }
        return out;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        List<Path> all = new ArrayList<>();
        try (var s = Files.walk(from)) {
            s.forEach(all::add);
        }
        for (Path p : all) {
            Path q = to.resolve(from.relativize(p).toString());
            if (Files.isDirectory(p)) {
                Files.createDirectories(q);
            } else {
                Files.copy(p, q);
            }
        }
    }
}
