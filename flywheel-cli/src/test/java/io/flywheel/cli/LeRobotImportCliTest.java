package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.ingest.Mp4SampleTable;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;

/**
 * {@code flywheel ingest LAKE DATASET} on LeRobotDataset folders written independently of the exporter
 * ({@link HandBuiltLeRobot}: Apache Parquet Java and {@code Mp4VideoWriter}, both layouts), and the clear errors for a
 * missing or damaged part (exit 1, the file and position named, nothing committed).
 */
class LeRobotImportCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void v30ManyEpisodesPerFile() throws IOException {
        Path ds = tmp.resolve("v30");
        HandBuiltLeRobot.v30(ds, 8);
        Path mp4 = ds.resolve("videos/" + HandBuiltLeRobot.CAMERA + "/chunk-000/file-000.mp4");
        Map<Integer, Map<Integer, FrameRow>> frames = ingestAndCheck(ds);
        // episode 1 starts at from_timestamp 0.5 s of the shared MP4: its frame k is sample 5 + k
        Mp4SampleTable t = Mp4SampleTable.read(mp4);
        for (int e = 0; e < 2; e++) {
            for (int k = 0; k < HandBuiltLeRobot.LENGTHS[e]; k++) {
                checkImage(frames.get(e).get(k), mp4, t.samples().get((e == 0 ? 0 : 5) + k));
            }
        }
    }

    @Test
    void v21OneFilePerEpisode() throws IOException {
        Path ds = tmp.resolve("v21");
        HandBuiltLeRobot.v21(ds, 5);
        Map<Integer, Map<Integer, FrameRow>> frames = ingestAndCheck(ds);
        for (int e = 0; e < 2; e++) {
            Path mp4 = ds.resolve(String.format("videos/chunk-000/%s/episode_%06d.mp4", HandBuiltLeRobot.CAMERA, e));
            Mp4SampleTable t = Mp4SampleTable.read(mp4);
            assertEquals(HandBuiltLeRobot.LENGTHS[e], t.samples().size());
            for (int k = 0; k < HandBuiltLeRobot.LENGTHS[e]; k++) checkImage(frames.get(e).get(k), mp4, t.samples().get(k));
        }
    }

    /** Ingests, checks episodes, tasks, values and raw files; returns frames by LeRobot episode index and frame. */
    private Map<Integer, Map<Integer, FrameRow>> ingestAndCheck(Path ds) throws IOException {
        Path lake = tmp.resolve("lake-" + ds.getFileName());
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun r = CliRun.of("ingest", lake.toString(), ds.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode sum = JSON.readTree(r.out());
        assertEquals(2, sum.get("episodes").asLong(), r.out());
        assertEquals(8, sum.get("frames").asLong(), r.out());
        CliRun again = CliRun.of("ingest", lake.toString(), ds.toString());
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.err().contains("[1/1] skip " + ds + ": already in the lake"), "the dataset folder is named: "
                + again.err());
        assertTrue(again.out().contains("ingested 0 recording(s): 0 episode(s), 0 frame(s); 1 skipped"), again.out());
        Map<Integer, Map<Integer, FrameRow>> out = new TreeMap<>();
        try (Lake l = Lake.open(lake)) {
            Map<String, Integer> byId = new TreeMap<>();
            try (LakeTable et = l.table("episodes")) {
                List<EpisodeRow> eps = et.episodes(ScanRequest.all());
                assertEquals(2, eps.size());
                for (EpisodeRow ep : eps) {
                    JsonNode md = JSON.readTree(ep.metadataJson());
                    int e = md.get("lerobot.episode_index").asInt();
                    byId.put(ep.episodeId(), e);
                    assertEquals(HandBuiltLeRobot.TASKS[e], ep.task());
                    assertEquals(HandBuiltLeRobot.LENGTHS[e], ep.frameCount());
                    assertEquals("so100", ep.robotId());
                    assertEquals(HandBuiltLeRobot.CAMERA, ep.masterTopic());
                    assertEquals("shoulder,elbow", md.get("lerobot.names.observation.state").asText());
                    assertTrue(md.get("lerobot.video." + HandBuiltLeRobot.CAMERA + ".codec").asText()
                            .startsWith("h264 (info.json says av1"), md.toString());
                    assertEquals("LEROBOT", md.get("format").asText());
                    // 400 ms for 5 frames at 10 fps: the rows' own float32 timestamps (0.4f is 0.4000000060 s)
                    long last = Math.round((double) ((HandBuiltLeRobot.LENGTHS[e] - 1) / (float) HandBuiltLeRobot.FPS) * 1e9);
                    assertEquals(last, ep.durationNs());
                }
            }
            try (LakeTable ft = l.table("frames")) {
                for (FrameRow f : ft.frames(ScanRequest.all())) {
                    int e = byId.get(f.episodeId());
                    out.computeIfAbsent(e, x -> new TreeMap<>()).put(f.frameIndex(), f);
                    assertArrayEquals(HandBuiltLeRobot.state(e, f.frameIndex()), f.state(), 0.0);
                    assertArrayEquals(HandBuiltLeRobot.action(e, f.frameIndex()), f.action(), 0.0);
                }
            }
            try (LakeTable rt = l.table("raw_files")) {
                long files;
                try (Stream<Path> s = Files.walk(ds)) {
                    files = s.filter(Files::isRegularFile).count();
                }
                var raw = rt.rawFiles(ScanRequest.all());
                assertEquals(files, raw.size(), "every file of the dataset is a raw file");
                assertTrue(raw.stream().allMatch(x -> x.format().equals(x.uri().endsWith(".mp4") ? "mp4" : "lerobot")));
            }
        }
        for (int e = 0; e < 2; e++) assertEquals(HandBuiltLeRobot.LENGTHS[e], out.get(e).size());
        return out;
    }

    private static void checkImage(FrameRow f, Path mp4, Mp4SampleTable.Sample s) throws IOException {
        assertEquals(1, f.images().size());
        ImageLocator img = f.images().get(0);
        assertEquals(HandBuiltLeRobot.CAMERA, img.topic());
        assertEquals(mp4.toAbsolutePath().normalize().toUri().toString(), img.rawUri());
        assertEquals("h264", img.format());
        assertEquals(s.offset(), img.offset(), "frame " + f.frameIndex());
        assertEquals(s.size(), img.length());
        assertEquals(0L, img.residualNs());
        // the range is one length-prefixed access unit: its NAL lengths add up to the range
        ByteBuffer b = ByteBuffer.allocate((int) img.length());
        try (FileChannel fc = FileChannel.open(mp4)) {
            fc.read(b, img.offset());
        }
        int at = 0;
        while (at < b.capacity()) at += 4 + b.getInt(at);
        assertEquals(b.capacity(), at);
    }

    @Test
    void missingOrDamagedPartsAreBadInputAndCommitNothing() throws IOException {
        Path ds = tmp.resolve("bad");
        HandBuiltLeRobot.v30(ds, 8);
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());

        Path data = ds.resolve("data/chunk-000/file-000.parquet");
        byte[] all = Files.readAllBytes(data);
        Files.write(data, java.util.Arrays.copyOf(all, all.length - 40));
        fails(lake, ds, "file-000.parquet", "truncated Parquet file");
        Files.delete(data);
        fails(lake, ds, "file-000.parquet", "missing");
        Files.write(data, all);

        Files.move(ds.resolve("meta/info.json"), tmp.resolve("info.json"));
        fails(lake, ds, "meta/info.json", "missing");
        Files.move(tmp.resolve("info.json"), ds.resolve("meta/info.json"));

        // info.json declares 3 state values where the data has 2
        Path info = ds.resolve("meta/info.json");
        String good = Files.readString(info);
        com.fasterxml.jackson.databind.node.ObjectNode doc = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(good);
        ((com.fasterxml.jackson.databind.node.ObjectNode) doc.path("features").path("observation.state"))
                .putArray("shape").add(3);
        Files.writeString(info, JSON.writeValueAsString(doc));
        fails(lake, ds, "file-000.parquet", "column 'observation.state': 2 values, but meta/info.json declares 3 (shape"
                + " [3], 2 names)");
        Files.writeString(info, good);

        Path shortVideo = tmp.resolve("short");
        HandBuiltLeRobot.v21(shortVideo, 3); // episode 0 has 5 frames, its video 3
        fails(lake, shortVideo, "episode_000000.mp4", "episode 0, frame 3: no video sample presented at 0.3 s");

        try (Lake l = Lake.open(lake); LakeTable et = l.table("episodes"); LakeTable rt = l.table("raw_files")) {
            assertEquals(0, et.countRows());
            assertEquals(0, rt.countRows());
        }
        CliRun ok = CliRun.of("ingest", lake.toString(), ds.toString(), "--json");
        assertEquals(0, ok.exitCode(), ok.err());
        assertEquals(8, JSON.readTree(ok.out()).get("frames").asLong());
    }

    private static void fails(Path lake, Path ds, String file, String what) {
        CliRun r = CliRun.of("ingest", lake.toString(), ds.toString());
        assertEquals(1, r.exitCode(), r.out() + r.err());
        assertTrue(r.err().contains(file), r.err());
        assertTrue(r.err().contains(what), r.err());
        assertTrue(r.noStackTrace(), r.err());
    }
}
