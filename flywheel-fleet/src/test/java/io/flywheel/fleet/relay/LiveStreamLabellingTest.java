package io.flywheel.fleet.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.sim.LiveFleet;
import io.flywheel.fleet.sim.LiveFleetOptions;
import io.flywheel.fleet.sim.LiveFleetReport;
import io.flywheel.fleet.sim.LiveProgress;
import io.flywheel.fleet.telemetry.EmbeddedBroker;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.Preset;
import io.flywheel.sim.SimOptions;
import io.flywheel.stream.accuracy.LabelReport;
import io.flywheel.stream.accuracy.LabelTruth;
import io.flywheel.stream.job.LabellerOptions;
import io.flywheel.stream.job.StreamLabeller;
import io.flywheel.stream.topics.EmbeddedKafka;

/**
 * The live side end to end: a simulated fleet (3 robots, 12 episodes of 1-2 s, as fast as the machine goes) uploads its
 * recordings to the gateway and publishes the fleet stream over MQTT; the gateway's relay puts it on Kafka; the
 * stream labeller labels every episode into the lake. Ground truth: the fleet's {@code stream_truth.json} (which
 * episodes failed, were e-stopped, had an operator intervention). Every episode is labelled as the truth says
 * (precision and recall 1 for every class present), and the label lands on the ingested episode's stream columns:
 * the recording's own name of the episode is the stream's.
 */
class LiveStreamLabellingTest {
    @TempDir
    Path tmp;

    @Test
    void theLiveFleetsEpisodesAreLabelledAsTheTruthSays() throws Exception {
        SimOptions fleet = SimOptions.builder(Preset.TINY).seed(11).episodes(12).robots(3).episodeSeconds(1)
                .resolution(64, 48).hardObjects(3).glassFailures(3).jpegEncoder(JpegEncoder.Kind.IMAGEIO).threads(2)
                .outDir(tmp.resolve("robots")).build();
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try (EmbeddedKafka kafka = EmbeddedKafka.start(null, 2);
                EmbeddedBroker mqtt = EmbeddedBroker.start("127.0.0.1", 0);
                Lake lake = Lake.init(tmp.resolve("lake"))) {
            Map<String, String> tokens = new TreeMap<>();
            for (RobotTokens.Issued t : RobotTokens.add(lake, List.of("robot_01", "robot_02", "robot_03"))) {
                tokens.put(t.robotId(), t.token());
            }
            LiveFleetReport report;
            try (FleetGateway gateway = FleetGateway.start(lake, GatewayOptions.builder().build());
                    KafkaRelay relay = KafkaRelay.start(mqtt.url(), "gw-kafka", kafka.bootstrap(), log::add)) {
                report = LiveFleet.run(LiveFleetOptions.builder(fleet, gateway.target()).mqtt(mqtt.url()).tokens(tokens)
                        .speed(0).streamEvents(true).build(), LiveProgress.Listener.NONE);
                assertTrue(report.ok(), report.failures().toString());
                assertEquals(12, report.ingested());
                long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (relay.stats().episodes() < 24 && System.nanoTime() < until) {
                    Thread.sleep(50);
                }
                relay.flush();
                assertEquals(24, relay.stats().episodes(), "a start and an end per episode");
                long seconds = report.episodeList().stream()
                        .mapToLong(e -> (e.endNs() - e.startNs() + 999_999_999L) / 1_000_000_000L).sum();
                assertEquals(seconds, relay.stats().observations(), "one summary per second (or part) of each episode");
                assertEquals(0, relay.stats().refused(), log.toString());
            }
            Path truthFile = tmp.resolve("robots").resolve(LiveFleet.STREAM_TRUTH);
            JsonNode truthJson = new ObjectMapper().readTree(truthFile.toFile());
            assertEquals(12, truthJson.get("episodes").size());
            Map<String, String> truthById = new TreeMap<>();
            truthJson.get("episodes").forEach(e -> truthById.put(e.get("episode_id").asText(),
                    e.get("stream_outcome").asText()));
            assertTrue(truthById.containsValue("failure") && truthById.containsValue("success"), truthById.toString());

            StreamLabeller labeller = new StreamLabeller(lake, LabellerOptions.builder(kafka.bootstrap()).group("live")
                    .log(log::add).build(), l -> { });
            Thread t = new Thread(labeller::run, "labeller");
            t.start();
            long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < until) {
                if (LabelReport.of(lake, Map.of()).labels() >= 12) {
                    break;
                }
                Thread.sleep(200);
            }
            labeller.stop();
            t.join(30_000);
            labeller.close();

            LabelReport r = LabelReport.of(lake, LabelTruth.read(truthFile));
            System.out.printf("live stream labels: %d compared, accuracy %.3f, %s%n", r.accuracy().compared(),
                    r.accuracy().accuracy(), r.accuracy().classes());
            assertEquals(12, r.accuracy().compared());
            assertEquals(1.0, r.accuracy().accuracy(), 1e-12, r.accuracy().classes().toString());
            for (var c : r.accuracy().classes()) {
                if (c.actual() > 0) {
                    assertEquals(1.0, c.precision(), 1e-12, c.toString());
                    assertEquals(1.0, c.recall(), 1e-12, c.toString());
                }
            }

            // the labels are on the ingested episodes: the effective outcome is the stream's
            lake.refresh();
            List<EpisodeRow> episodes;
            try (LakeTable tb = lake.table(TableSchemas.EPISODES)) {
                episodes = tb.episodes(ScanRequest.all());
            }
            assertEquals(12, episodes.size());
            for (EpisodeRow e : episodes) {
                assertNotNull(e.streamLabel(), e.episodeId());
                assertEquals(truthById.get(e.streamLabel().streamEpisodeId()), e.effectiveOutcome(), e.episodeId());
            }
        }
    }
}
