package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.curate.PcaWhitening;
import io.flywheel.curate.pool.EpisodeVectors;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;

/**
 * {@code flywheel mine --cameras --whiten} on the tiny simulated fleet (6 episodes, one glass-cup
 * failure, cameras head + two wrists), enriched with the default model: the camera vectors are the
 * mean the test computes from the frames table, the reported distances are the whitened cosine
 * distances the test computes, the settings reach the training set's lineage, and bad options are
 * usage errors. With {@code --phases} the vectors are the same mean over the frames of those phases only
 * ({@code frames.phase}, which enrich derives from the sim's gripper joints).
 */
class MineCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LEFT = "/left_wrist_camera/image_raw/compressed";
    private static final String RIGHT = "/right_wrist_camera/image_raw/compressed";
    private static final String HEAD = "/head_camera/image_raw/compressed";

    @TempDir
    static Path tmp;
    static Path fleet;
    static String lake;

    @BeforeAll
    static void build() {
        fleet = tmp.resolve("fleet");
        CliRun sim = CliRun.of("sim", "--preset", "tiny", "--out", fleet.toString(), "--jpeg", "imageio");
        assertEquals(0, sim.exitCode(), sim.err());
        lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun in = CliRun.of("ingest", lake, fleet.toString());
        assertEquals(0, in.exitCode(), in.err());
        CliRun en = CliRun.of("enrich", lake, "--threads", "2");
        assertEquals(0, en.exitCode(), en.err());
    }

    @Test
    void wristCameraVectorsAreTheFramesTableMeanAndWhitenedDistancesAreReported() throws Exception {
        List<String> cams = List.of(LEFT, RIGHT);
        Map<String, float[]> want = frameMeans(cams);
        assertEquals(6, want.size(), "every episode has wrist embeddings");
        EpisodeVectors ev;
        try (Lake l = Lake.open(lake)) {
            ev = EpisodeVectors.fromCameras(l, cams);
        }
        assertEquals(6, ev.size());
        assertEquals(cams, ev.cameras());
        assertEquals(0, ev.withoutVectors().size());
        for (int i = 0; i < ev.size(); i++) {
            float[] w = want.get(ev.infos().get(i).episodeId());
            for (int j = 0; j < w.length; j++) {
                assertEquals(w[j], ev.vectors()[i][j], 1e-6, ev.infos().get(i).episodeId() + " [" + j + "]");
            }
        }

        Path mined = tmp.resolve("mined.json");
        CliRun r = CliRun.of("mine", lake, "--failures", "--cameras", LEFT + "," + RIGHT, "--whiten", "-k", "3",
                "--out", mined.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode s = JSON.readTree(r.out());
        assertEquals(List.of(LEFT, RIGHT), List.of(s.get("cameras").get(0).asText(), s.get("cameras").get(1).asText()));
        assertTrue(s.get("whiten").asBoolean());
        assertEquals(1e-3, s.get("whiten_epsilon").asDouble(), 0);
        assertEquals("cosine distance in the PCA-whitened space", s.get("distance").asText());
        assertEquals(6, s.get("episodes_with_vectors").asInt());
        assertEquals(0, s.get("episodes_without_vectors").asInt());
        assertEquals(5, s.get("pool_size").asInt()); // 6 minus the one failure query

        // the distances, recomputed: whitening fitted on the prefiltered pool, cosine distance of the whitened vectors
        String query = s.get("lineage").get("query_episode_ids").get(0).asText();
        List<float[]> pool = new ArrayList<>();
        Map<String, float[]> byId = new HashMap<>();
        for (int i = 0; i < ev.size(); i++) {
            EpisodeInfo e = ev.infos().get(i);
            byId.put(e.episodeId(), ev.vectors()[i]);
            if (!e.episodeId().equals(query) && !"fail".equals(e.qualityStatus()) && !e.failed() && !e.duplicate()) {
                pool.add(ev.vectors()[i]);
            }
        }
        assertTrue(pool.size() >= 3, "pool after the prefilter: " + pool.size());
        assertEquals(pool.size(), s.get("lineage").get("whiten_fitted_on").asInt());
        PcaWhitening w = PcaWhitening.fit(pool.toArray(new float[0][]), 1e-3);
        float[] q = w.apply(byId.get(query));
        JsonNode hits = s.get("neighbours");
        assertEquals(3, hits.size());
        double previous = -1;
        for (JsonNode h : hits) {
            float[] n = w.apply(byId.get(h.get("episode_id").asText()));
            double dot = 0;
            for (int j = 0; j < n.length; j++) {
                dot += q[j] * n[j];
            }
            assertEquals(1 - dot, h.get("distance").asDouble(), 1e-4, h.toString());
            assertTrue(h.get("distance").asDouble() >= previous);
            previous = h.get("distance").asDouble();
        }

        // mined.json carries the settings, and trainset build keeps them in the set's lineage
        JsonNode file = JSON.readTree(mined.toFile());
        assertEquals(LEFT, file.get("lineage").get("cameras").get(0).asText());
        assertTrue(file.get("lineage").get("mine_command_line").asText().contains("--whiten --whiten-epsilon 0.001"));
        CliRun set = CliRun.of("trainset", "build", lake, "--tag", "train-whiten", "--ratio", "0", "--rate-hz", "0",
                "--mined", mined.toString(), "--json");
        assertEquals(0, set.exitCode(), set.err());
        JsonNode lineage = JSON.readTree(set.out()).get("lineage");
        assertEquals(RIGHT, lineage.get("cameras").get(1).asText());
        assertTrue(lineage.get("whiten").asBoolean());
        assertEquals(1e-3, lineage.get("whiten_epsilon").asDouble(), 0);
        assertTrue(lineage.get("mining_source_versions").has("frames"), lineage.toString());

        CliRun text = CliRun.of("mine", lake, "--failures", "--cameras", LEFT + "," + RIGHT, "--whiten", "-k", "2");
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("whitened cosine distance"), text.out());
        assertTrue(text.out().contains("vectors: cameras " + LEFT + ", " + RIGHT + ", PCA-whitened (epsilon 0.001, fitted on "
                + pool.size() + " pool episodes; distances are in the whitened space); 6 episode(s) with vectors, 0 left out"),
                text.out());
    }

    @Test
    void withoutTheNewOptionsMiningIsUnchanged() throws Exception {
        CliRun r = CliRun.of("mine", lake, "--failures", "-k", "2", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode s = JSON.readTree(r.out());
        assertEquals(0, s.get("cameras").size());
        assertTrue(!s.get("whiten").asBoolean() && s.get("whiten_epsilon").isNull());
        assertEquals("cosine distance", s.get("distance").asText());
        assertEquals("episodes.emb_mobilenet_v2_block10_gap", s.get("lineage").get("episode_vectors").asText());
        assertTrue(s.get("lineage").get("searched").asText().startsWith("episodes.emb_mobilenet_v2_block10_gap (the"
                + " lake's column"), s.get("lineage").toString());
        assertEquals(6, s.get("episodes_with_vectors").asInt());
    }

    @Test
    void jointQueriesAreSearchedAsOneAndListedUnderTheirNearestQuery() throws Exception {
        List<String> ids = new ArrayList<>();
        try (Lake l = Lake.open(lake)) {
            EpisodeVectors ev = EpisodeVectors.fromCameras(l, List.of(LEFT, RIGHT));
            ev.infos().stream().filter(e -> !e.failed()).forEach(e -> ids.add(e.episodeId())); // 5 successes
        }
        CliRun r = CliRun.of("mine", lake, "--episode", ids.get(0), "--episode", ids.get(1), "--cameras", LEFT + "," + RIGHT,
                "-k", "2", "--joint", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode s = JSON.readTree(r.out());
        assertTrue(s.get("joint").asBoolean());
        assertTrue(s.get("lineage").get("query_mode").asText().startsWith("joint"), s.get("lineage").toString());
        assertTrue(s.get("lineage").get("mine_command_line").asText().endsWith("--joint"));
        // 2 queries x k = 2 asks for 4; the pool after the prefilter (6 episodes minus the 2 queries and the failure)
        // holds 3
        java.util.Set<String> got = new java.util.HashSet<>();
        s.get("neighbours").forEach(n -> got.add(n.get("episode_id").asText()));
        assertEquals(3, got.size(), s.get("neighbours").toString());
        assertEquals(got.size(), s.get("neighbours").size());
        for (JsonNode n : s.get("neighbours")) {
            assertTrue(List.of(ids.get(0), ids.get(1)).contains(n.get("query_episode_id").asText()), n.toString());
        }
        CliRun text = CliRun.of("mine", lake, "--episode", ids.get(0), "--episode", ids.get(1), "--cameras",
                LEFT + "," + RIGHT, "-k", "2", "--joint");
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("2 queries searched as one joint query, 3 neighbours from a pool of 4, 3 passing the"
                + " prefilter"), text.out());
        assertEquals(3, s.get("pool_passing_prefilter").asInt());
    }

    @Test
    void aPictureIsNotWrittenOverAFolderNorAFolderOverAFile() throws Exception {
        Path folder = java.nio.file.Files.createDirectories(tmp.resolve("maps"));
        CliRun map = CliRun.of("map", lake, "--out", folder.toString());
        assertEquals(1, map.exitCode(), map.out());
        assertEquals("flywheel map: " + folder + " is a folder; give a file name for the picture, e.g. "
                + folder.resolve("picture.png"), map.err().strip());
        assertTrue(java.nio.file.Files.isDirectory(folder));
        Path file = java.nio.file.Files.writeString(tmp.resolve("README.md"), "# notes\n");
        CliRun sweep = CliRun.of("dedup", "sweep", lake, "--out", file.toString());
        assertEquals(1, sweep.exitCode(), sweep.out());
        assertEquals("flywheel dedup sweep: " + file + ": is a file; a folder is expected here", sweep.err().strip());
        assertEquals("# notes\n", java.nio.file.Files.readString(file));
    }

    @Test
    void aRecordingIsEmbeddedFromTheSameCameras() throws Exception {
        // a recording of a successful episode of the lake (a failure would be outside the prefiltered pool)
        Map<String, String> files = new HashMap<>();
        JSON.readTree(CliRun.of("qc", "report", lake, "--json").out()).get("episodes")
                .forEach(e -> files.put(e.get("episode_id").asText(), e.get("source_files").get(0).asText()));
        String id = null;
        try (Lake l = Lake.open(lake)) {
            for (EpisodeInfo e : EpisodeVectors.fromCameras(l, List.of(LEFT, RIGHT)).infos()) {
                if (id == null && !"fail".equals(e.qualityStatus()) && !e.failed() && !e.duplicate()) {
                    id = e.episodeId();
                }
            }
        }
        String file = files.get(id);
        String name = file;
        Path rec;
        try (Stream<Path> walk = Files.walk(fleet)) {
            rec = walk.filter(p -> p.getFileName().toString().equals(name)).findFirst().orElseThrow();
        }
        CliRun r = CliRun.of("mine", lake, "--recording", rec.toString(), "--cameras", LEFT + "," + RIGHT, "--whiten",
                "-k", "1", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode hit = JSON.readTree(r.out()).get("neighbours").get(0);
        // the recording is an episode of the lake, embedded the same way: its nearest neighbour is itself
        assertEquals(id, hit.get("episode_id").asText(), hit.toString());
        assertEquals(0, hit.get("distance").asDouble(), 1e-4, hit.toString());
        assertTrue(hit.get("query_episode_id").asText().startsWith(name + "#"), hit.toString());

        // with phases: the recording's frames get the same phases from its gripper joint, so again itself
        CliRun p = CliRun.of("mine", lake, "--recording", rec.toString(), "--cameras", LEFT + "," + RIGHT, "--phases",
                "approach,grasp,lift", "-k", "1", "--json");
        assertEquals(0, p.exitCode(), p.err());
        JsonNode ph = JSON.readTree(p.out()).get("neighbours").get(0);
        assertEquals(id, ph.get("episode_id").asText(), ph.toString());
        assertEquals(0, ph.get("distance").asDouble(), 1e-4, ph.toString());
        assertTrue(JSON.readTree(p.out()).get("lineage").get("mine_command_line").asText()
                .contains("--phases approach,grasp,lift"), p.out());
    }

    @Test
    void badOptionsAreUsageErrors() {
        // a camera the lake does not have is bad input (exit 1); the others below are usage errors (exit 2)
        CliRun unknown = CliRun.of("mine", lake, "--failures", "--cameras", LEFT + ",/nope/image");
        assertEquals(1, unknown.exitCode(), unknown.err());
        assertTrue(unknown.err().contains("unknown camera topic '/nope/image'"), unknown.err());
        assertTrue(unknown.err().contains(HEAD + ", " + LEFT + ", " + RIGHT), "names the lake's cameras: " + unknown.err());
        CliRun noEpisode = CliRun.of("mine", lake, "--episode", "no-such-episode");
        assertEquals(1, noEpisode.exitCode(), "an unknown episode id is bad input: " + noEpisode.err());
        assertTrue(noEpisode.err().startsWith("flywheel mine: episode 'no-such-episode' has no embedding in the lake"
                + " (unknown id, or not enriched yet)"), noEpisode.err());
        CliRun epsAlone = CliRun.of("mine", lake, "--failures", "--whiten-epsilon", "0.01");
        assertEquals(2, epsAlone.exitCode());
        assertTrue(epsAlone.err().startsWith("flywheel mine: --whiten-epsilon needs --whiten"), epsAlone.err());
        CliRun comma = CliRun.of("mine", lake, "--failures", "--cameras", ",");
        assertEquals(2, comma.exitCode(), comma.out());
        assertTrue(comma.err().startsWith("flywheel mine: --cameras: an empty name"), comma.err());
        CliRun k0 = CliRun.of("mine", lake, "--failures", "-k", "0");
        assertEquals(2, k0.exitCode());
        assertTrue(k0.err().startsWith("flywheel mine: -k must be >= 1, got 0"), k0.err());
        CliRun zero = CliRun.of("mine", lake, "--failures", "--whiten", "--whiten-epsilon", "0");
        assertEquals(2, zero.exitCode());
        assertTrue(zero.err().contains("--whiten-epsilon: whitening epsilon must be a positive number, got 0.0"), zero.err());
        CliRun text = CliRun.of("mine", lake, "--failures", "--whiten", "--whiten-epsilon", "small");
        assertEquals(2, text.exitCode());
        assertTrue(text.err().contains("--whiten-epsilon") && text.err().contains("small"), text.err());
        CliRun twice = CliRun.of("mine", lake, "--failures", "--cameras", LEFT + "," + LEFT);
        assertEquals(2, twice.exitCode());
        assertTrue(twice.err().contains("camera topics repeat"), twice.err());
        CliRun both = CliRun.of("mine", lake, "--failures", "--failures-from-eval", "ev1");
        assertEquals(2, both.exitCode(), both.err());
        assertTrue(both.err().startsWith("flywheel mine: --failures and --failures-from-eval exclude each other"),
                both.err());
        assertTrue(unknown.noStackTrace() && noEpisode.noStackTrace() && epsAlone.noStackTrace() && zero.noStackTrace() && text.noStackTrace()
                && twice.noStackTrace());
    }

    @Test
    void phaseVectorsAreTheMeanOverThatPhasesFrames() throws Exception {
        List<String> cams = List.of(LEFT, RIGHT);
        Map<String, float[]> want = frameMeans(cams, "grasp");
        Map<String, float[]> every = frameMeans(cams);
        EpisodeVectors ev;
        try (Lake l = Lake.open(lake)) {
            ev = EpisodeVectors.fromCameras(l, cams, List.of("grasp"));
        }
        assertEquals(List.of("grasp"), ev.phases());
        assertTrue(want.size() >= 5, "episodes with grasp-frame embeddings on both wrists: " + want.keySet());
        assertEquals(want.size(), ev.size());
        assertEquals(6 - want.size(), ev.withoutVectors().size());
        double largestChange = 0;
        for (int i = 0; i < ev.size(); i++) {
            String id = ev.infos().get(i).episodeId();
            float[] w = want.get(id);
            for (int j = 0; j < w.length; j++) {
                assertEquals(w[j], ev.vectors()[i][j], 1e-6, id + " [" + j + "]");
                largestChange = Math.max(largestChange, Math.abs(w[j] - every.get(id)[j]));
            }
        }
        assertTrue(largestChange > 1e-3, "the grasp frames' mean differs from every frame's: " + largestChange);

        Path mined = tmp.resolve("mined-grasp.json");
        CliRun r = CliRun.of("mine", lake, "--failures", "--cameras", LEFT + "," + RIGHT, "--phases", "grasp", "-k", "2",
                "--out", mined.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode s = JSON.readTree(r.out());
        assertEquals("[\"grasp\"]", s.get("phases").toString());
        assertEquals(ev.size(), s.get("episodes_with_vectors").asInt());
        // cosine distances of the phase vectors
        Map<String, float[]> byId = new HashMap<>();
        for (int i = 0; i < ev.size(); i++) {
            byId.put(ev.infos().get(i).episodeId(), ev.vectors()[i]);
        }
        float[] q = byId.get(s.get("lineage").get("query_episode_ids").get(0).asText());
        for (JsonNode h : s.get("neighbours")) {
            float[] n = byId.get(h.get("episode_id").asText());
            double dot = 0;
            for (int j = 0; j < n.length; j++) {
                dot += q[j] * n[j];
            }
            assertEquals(1 - dot, h.get("distance").asDouble(), 1e-4, h.toString());
        }
        JsonNode lin = JSON.readTree(mined.toFile()).get("lineage");
        assertEquals("[\"grasp\"]", lin.get("phases").toString());
        assertTrue(lin.get("episode_vectors").asText().endsWith("over the frames of phases grasp"), lin.toString());
        assertTrue(lin.get("mine_command_line").asText().endsWith("--cameras " + LEFT + "," + RIGHT + " --phases grasp"),
                lin.toString());
        CliRun set = CliRun.of("trainset", "build", lake, "--tag", "train-grasp", "--ratio", "0", "--rate-hz", "0",
                "--mined", mined.toString(), "--json");
        assertEquals(0, set.exitCode(), set.err());
        assertEquals("[\"grasp\"]", JSON.readTree(set.out()).get("lineage").get("phases").toString());

        CliRun text = CliRun.of("mine", lake, "--failures", "--cameras", LEFT + "," + RIGHT, "--phases", "approach,grasp,lift",
                "-k", "1");
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("vectors: cameras " + LEFT + ", " + RIGHT + ", frames of phases approach, grasp, lift,"
                + " not whitened"), text.out());

        // unchanged without --phases: every frame, phases [] in the lineage
        CliRun plain = CliRun.of("mine", lake, "--failures", "--cameras", LEFT + "," + RIGHT, "-k", "1", "--json");
        assertEquals(0, plain.exitCode(), plain.err());
        assertEquals("[]", JSON.readTree(plain.out()).get("lineage").get("phases").toString());
    }

    @Test
    void badPhasesAreUsageErrors() {
        CliRun noCams = CliRun.of("mine", lake, "--failures", "--phases", "grasp");
        assertEquals(2, noCams.exitCode(), noCams.err());
        assertTrue(noCams.err().contains("--phases: phases grasp need cameras"), noCams.err());
        CliRun unknown = CliRun.of("mine", lake, "--failures", "--cameras", LEFT, "--phases", "grasp,holding");
        assertEquals(2, unknown.exitCode(), unknown.err());
        assertTrue(unknown.err().contains("unknown phase 'holding'; the phases are idle, approach, grasp, lift, place,"
                + " retreat"), unknown.err());
        CliRun twice = CliRun.of("mine", lake, "--failures", "--cameras", LEFT, "--phases", "grasp,grasp");
        assertEquals(2, twice.exitCode(), twice.err());
        assertTrue(twice.err().contains("phases repeat"), twice.err());
        CliRun rec = CliRun.of("mine", lake, "--recording", "x.mcap", "--phases", "lift");
        assertEquals(2, rec.exitCode(), rec.err());
        assertTrue(noCams.noStackTrace() && unknown.noStackTrace() && twice.noStackTrace() && rec.noStackTrace());
    }

    /** normalise(mean over cams of normalise(mean of the frames' embeddings on that camera)), per episode, in double. */
    private static Map<String, float[]> frameMeans(List<String> cams) {
        return frameMeans(cams, null);
    }

    /**
     * As {@link #frameMeans(List)} over the frames whose phase is {@code phase} (null: every frame); only episodes
     * with an embedding on every camera in that phase.
     */
    private static Map<String, float[]> frameMeans(List<String> cams, String phase) {
        Map<String, double[][]> sums = new HashMap<>();
        Map<String, int[]> counts = new HashMap<>();
        try (Lake l = Lake.open(lake); LakeTable t = l.table("frames")) {
            String model = l.models().resolve(null, l.location()).id(); // the one model enrich ran
            for (io.flywheel.rows.FrameRow fr : t.frames(ScanRequest.all())) {
                if (phase != null && !phase.equals(fr.phase())) {
                    continue;
                }
                for (int i = 0; i < fr.enrichment().size(); i++) {
                    int c = cams.indexOf(fr.images().get(i).topic());
                    float[] v = c < 0 || fr.enrichment().get(i) == null ? null : fr.enrichment().get(i).embedding(model);
                    if (v == null) {
                        continue;
                    }
                    double[] acc = sums.computeIfAbsent(fr.episodeId(), k -> new double[cams.size()][v.length])[c];
                    for (int j = 0; j < v.length; j++) {
                        acc[j] += v[j];
                    }
                    counts.computeIfAbsent(fr.episodeId(), k -> new int[cams.size()])[c]++;
                }
            }
        }
        Map<String, float[]> out = new HashMap<>();
        sums.forEach((ep, s) -> {
            if (java.util.Arrays.stream(counts.get(ep)).anyMatch(n -> n == 0)) {
                return; // no embedding on one of the cameras
            }
            double[] m = new double[s[0].length];
            for (double[] cam : s) {
                double n = Math.sqrt(dot(cam, cam));
                for (int j = 0; j < m.length; j++) {
                    m[j] += cam[j] / n;
                }
            }
            double n = Math.sqrt(dot(m, m));
            float[] v = new float[m.length];
            for (int j = 0; j < m.length; j++) {
                v[j] = (float) (m[j] / n);
            }
            out.put(ep, v);
        });
        return out;
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    /**
     * {@code mine --failures-from-eval}: an eval run whose rollouts are the lake's episodes (linked by id) and one
     * result without a recording; the failures of the chosen cell are the queries, the unrecorded one is reported as
     * not minable, and the run and cell reach the training set's lineage.
     */
    @Test
    void failuresFromEvalMineTheFailedRolloutsOfTheCell() throws Exception {
        JsonNode eps = JSON.readTree(CliRun.of("qc", "report", lake, "--json").out()).get("episodes");
        List<String> ids = new ArrayList<>();
        eps.forEach(e -> ids.add(e.get("episode_id").asText()));
        java.util.Collections.sort(ids);
        StringBuilder csv = new StringBuilder("episode_id,task,object,lighting,robot,success\n");
        for (int i = 0; i < ids.size(); i++) { // 0, 1 failed on glass; 3 failed on a cup
            csv.append(ids.get(i)).append(",pick,").append(i < 3 ? "glass_cup" : "cup").append(",dim,arm-1,")
                    .append(i == 0 || i == 1 || i == 3 ? "0" : "1").append('\n');
        }
        csv.append("not-recorded-1,pick,glass_cup,dim,arm-1,0\n");
        Path results = Files.writeString(tmp.resolve("eval.csv"), csv.toString());
        CliRun in = CliRun.of("eval", "ingest", lake, results.toString(), "--run", "ev1", "--policy", "p1");
        assertEquals(0, in.exitCode(), in.err());
        assertTrue(in.out().contains("7 rollouts, 3 succeeded (42.9%); 6 with a recording in the lake (minable), 1 not"),
                in.out());

        Path mined = tmp.resolve("mined-eval.json");
        CliRun r = CliRun.of("mine", lake, "--failures-from-eval", "ev1", "--cell", "object=glass_cup", "-k", "2",
                "--out", mined.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode ev = JSON.readTree(r.out()).get("eval");
        assertEquals(List.of(ids.get(0), ids.get(1)), List.of(ev.get("queries").get(0).asText(),
                ev.get("queries").get(1).asText()));
        assertEquals(2, ev.get("queries").size());
        assertEquals("not-recorded-1", ev.get("not_minable").get(0).asText());
        assertEquals(3, ev.get("failures").asInt());
        CliRun set = CliRun.of("trainset", "build", lake, "--tag", "train-eval", "--ratio", "0", "--rate-hz", "0",
                "--mined", mined.toString(), "--json");
        assertEquals(0, set.exitCode(), set.err());
        JsonNode lineage = JSON.readTree(set.out()).get("lineage");
        assertEquals("ev1", lineage.get("eval_run").asText());
        assertEquals("glass_cup", lineage.get("eval_cells").get(0).get("object").asText());
        assertEquals(2, lineage.get("eval_query_episode_ids").size());

        CliRun text = CliRun.of("mine", lake, "--failures-from-eval", "ev1", "-k", "1");
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("eval run ev1: 4 failed rollout(s), 3 minable, 1 not minable"), text.out());
        assertEquals(1, CliRun.of("mine", lake, "--failures-from-eval", "nope").exitCode());
        assertEquals(1, CliRun.of("mine", lake, "--failures-from-eval", "ev1", "--cell", "colour=red").exitCode());
        assertEquals(1, CliRun.of("mine", lake, "--failures-from-eval", "ev1", "--cell", "object=sponge").exitCode());
        assertEquals(2, CliRun.of("mine", lake, "--failures-from-eval", "ev1", "--cell", "object").exitCode());
        assertEquals(2, CliRun.of("mine", lake, "--cell", "object=cup").exitCode());
    }
}
