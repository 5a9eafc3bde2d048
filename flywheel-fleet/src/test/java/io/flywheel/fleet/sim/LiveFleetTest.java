package io.flywheel.fleet.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.telemetry.TelemetryOptions;
import io.flywheel.fleet.telemetry.TelemetrySubscriber;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.TelemetryRow;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.GroundTruth;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.Preset;
import io.flywheel.sim.ProgressListener;
import io.flywheel.sim.SimOptions;
import io.flywheel.testkit.Mosquitto;

/**
 * A live simulated fleet (3 robots, 3 episodes of about 1 s each, 64x48, as fast as the machine goes) against a real
 * gateway on a temporary lake and a real mosquitto, with every fault on: each upload's connection cut with
 * probability 0.6 at a random offset, every alert published twice with the same message id, the MQTT connection cut
 * in half of the episodes right after a QoS 1 or 2 message. The ground truth is independent of the live code: the
 * same fleet written by the offline simulator ({@code flywheel sim}) gives the SHA-256 of every episode, and the plan
 * gives one {@code billing} audit record per episode and one {@code grasp_failed} alert per failed episode.
 *
 * <p>It fails when resumption breaks (a cut upload not landing, or landing with other bytes), when deduplication
 * breaks (a duplicate or a redelivery after a reconnect as a second row), or when the faults did not happen.
 */
class LiveFleetTest {
    @TempDir
    Path tmp;

    private static SimOptions fleet(Path out) {
        return SimOptions.builder(Preset.TINY).seed(7).episodes(9).robots(3).episodeSeconds(1).resolution(64, 48)
                .hardObjects(2).glassFailures(2).jpegEncoder(JpegEncoder.Kind.IMAGEIO).threads(2).outDir(out).build();
    }

    @Test
    void everyEpisodeLandsOnceAndEveryQos1And2MessageIsInTheTableOnceDespiteTheFaults() throws Exception {
        // the truth: the same fleet from the offline simulator
        GroundTruth truth;
        FleetSimulator.run(fleet(tmp.resolve("offline")), ProgressListener.NONE);
        truth = FleetSimulator.readGroundTruth(tmp.resolve("offline").resolve(FleetSimulator.GROUND_TRUTH));
        Map<String, String> shaOf = new TreeMap<>(); // episode id -> SHA-256 of the offline file
        for (GroundTruth.Episode e : truth.episodes()) {
            shaOf.put(e.episodeId(), FleetClient.sha256(tmp.resolve("offline").resolve(e.file())));
        }
        Set<String> failed = truth.episodes().stream().filter(e -> e.failureCause() != null)
                .map(GroundTruth.Episode::episodeId).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(2, failed.size());

        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try (Mosquitto broker = Mosquitto.start(tmp.resolve("mosquitto"));
                Lake lake = Lake.init(tmp.resolve("lake"))) {
            Map<String, String> tokens = new TreeMap<>();
            for (RobotTokens.Issued t : RobotTokens.add(lake, List.of("robot_01", "robot_02", "robot_03"))) {
                tokens.put(t.robotId(), t.token());
            }
            LiveFleetReport report;
            try (FleetGateway gateway = FleetGateway.start(lake, GatewayOptions.builder().build());
                    TelemetrySubscriber sub = TelemetrySubscriber.start(lake, TelemetryOptions.builder(broker.url())
                            .clientId("gw-live").batchInterval(Duration.ofMillis(200))
                            .linkInterval(Duration.ofMillis(200)).build(), log::add)) {
                LiveFleetOptions o = LiveFleetOptions.builder(fleet(tmp.resolve("robots")), gateway.target())
                        .mqtt(broker.url()).tokens(tokens).speed(0).faults(new Faults(0.6, 1.0, 0.5))
                        .chunkBytes(8192).build();
                report = LiveFleet.run(o, LiveProgress.Listener.NONE);
                assertTrue(report.ok(), report.failures().toString());
                System.out.printf("live fleet: %d episodes, %d cut(s), %d resumed, %d bytes sent of %d, published %s,"
                        + " %d duplicate(s), %d MQTT cut(s), %d reconnect(s), %d in flight at cuts, %.1f s (%.1f s"
                        + " recording, %.0fx real time)%n", report.episodesRecorded(), report.uploadCuts(),
                        report.uploadsResumed(), report.bytesSent(), report.bytes(),
                        java.util.Arrays.toString(report.published()), report.duplicatesInjected(), report.mqttCuts(),
                        report.reconnects(), report.inFlightAtCuts(), report.wallSeconds(),
                        report.recordingWallSeconds(), report.speedAchieved());

                // the faults happened
                assertTrue(report.uploadCuts() > 0, "uploads cut: " + report.uploadCuts());
                assertTrue(report.uploadsResumed() > 0, "uploads resumed from a staged offset");
                assertTrue(report.bytesSent() > report.bytes(), "bytes sent again after cuts");
                long alerts = report.messages().stream().filter(m -> m.qos() == 1).count();
                assertTrue(alerts >= 2, "a grasp_failed alert in each failed episode: " + report.messages());
                assertEquals(alerts, report.duplicatesInjected(), "every alert published twice");
                // a cut that comes while the robot is still reconnecting from the last one needs no reconnect of
                // its own, so reconnects can be fewer than cuts; at least one happened, and the check below sees
                // every QoS 1 and 2 message once
                assertTrue(report.mqttCuts() > 0 && report.reconnects() > 0,
                        report.mqttCuts() + " MQTT cut(s), " + report.reconnects() + " reconnect(s)");
                assertEquals(9, report.ingested());

                LiveCheck.Result check = LiveCheck.check(lake, report, Duration.ofSeconds(30));
                assertTrue(check.ok(), check.problems().toString());
                assertEquals(check.alerts(), check.alertsLinked(), "every alert linked to the episode it happened in");
                assertTrue(sub.stats().duplicates() >= report.duplicatesInjected(), sub.stats().toString());
            }

            // every episode: the offline simulator's bytes, in raw_files once, one episodes row
            Map<String, String> liveSha = new TreeMap<>();
            report.episodeList().forEach(e -> liveSha.put(e.episodeId(), e.sha256()));
            assertEquals(shaOf, liveSha, "the live fleet records what the offline simulator writes, byte for byte");
            lake.refresh();
            List<RawFileRow> raw;
            List<EpisodeRow> episodes;
            try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
                raw = t.rawFiles(ScanRequest.all());
            }
            try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
                episodes = t.episodes(ScanRequest.all());
            }
            assertEquals(9, raw.size());
            assertEquals(new TreeSet<>(shaOf.values()), raw.stream().map(RawFileRow::sha256)
                    .collect(Collectors.toCollection(TreeSet::new)));
            Map<String, Long> episodesPerRecording = episodes.stream()
                    .collect(Collectors.groupingBy(EpisodeRow::recordingId, Collectors.counting()));
            for (RawFileRow r : raw) {
                assertEquals(1L, episodesPerRecording.get(r.recordingId()), r.uri());
                assertTrue(r.uri().contains("/raw/" + r.robotId() + "/" + r.sha256() + ".mcap"), r.uri());
            }

            // telemetry: QoS 1 and 2 exactly once per message id; one billing per episode, one grasp_failed per
            // failed episode, linked to it
            List<TelemetryRow> rows;
            try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
                rows = t.rows(FleetTables.TELEMETRY_TABLE, ScanRequest.all());
            }
            Map<String, Long> perId = rows.stream().filter(r -> r.qos() > 0)
                    .collect(Collectors.groupingBy(r -> r.robotId() + "/" + r.messageId(), Collectors.counting()));
            assertEquals(report.messages().size(), perId.size());
            perId.forEach((id, n) -> assertEquals(1L, n, id));
            List<TelemetryRow> billing = rows.stream().filter(r -> r.kind().equals("billing")).toList();
            assertEquals(shaOf.keySet(), billing.stream().map(TelemetryRow::text)
                    .collect(Collectors.toCollection(TreeSet::new)));
            assertTrue(billing.stream().allMatch(r -> r.qos() == 2));
            Map<String, String> lakeEpisodeOfSim = new HashMap<>();
            Map<String, String> recordingOfSha = new HashMap<>();
            raw.forEach(r -> recordingOfSha.put(r.sha256(), r.recordingId()));
            Map<String, String> episodeOfRecording = new HashMap<>();
            episodes.forEach(e -> episodeOfRecording.put(e.recordingId(), e.episodeId()));
            shaOf.forEach((sim, sha) -> lakeEpisodeOfSim.put(sim, episodeOfRecording.get(recordingOfSha.get(sha))));
            List<TelemetryRow> graspFailed = rows.stream().filter(r -> r.kind().equals("grasp_failed")).toList();
            assertEquals(failed.size(), graspFailed.size());
            Set<String> failedInLake = failed.stream().map(lakeEpisodeOfSim::get)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> linkedTo = graspFailed.stream().map(TelemetryRow::episodeId)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(failedInLake, linkedTo);
            assertTrue(rows.stream().anyMatch(r -> r.kind().equals("heartbeat") && r.qos() == 0));
        }
    }
}
