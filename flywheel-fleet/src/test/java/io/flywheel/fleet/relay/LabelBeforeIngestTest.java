package io.flywheel.fleet.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.StreamTables;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.GroundTruth;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.Preset;
import io.flywheel.sim.ProgressListener;
import io.flywheel.sim.SimOptions;

/**
 * A stream label that arrives before its episode is uploaded: the simulator's one episode is labelled failure
 * (e_stop) in label_history first, then uploaded through the gateway; once the gateway has ingested it, the episode
 * carries the label (matched by the recording's own episode id, kept as source_episode_id) and its effective outcome
 * is failure while the recording says success.
 */
class LabelBeforeIngestTest {
    @TempDir
    Path tmp;

    @Test
    void aLabelThatCameFirstLandsOnTheEpisodeWhenItIsIngested() throws Exception {
        SimOptions o = SimOptions.builder(Preset.TINY).seed(3).episodes(1).robots(1).episodeSeconds(1)
                .resolution(64, 48).hardObjects(0).glassFailures(0).jpegEncoder(JpegEncoder.Kind.IMAGEIO).threads(1)
                .outDir(tmp.resolve("fleet")).build();
        FleetSimulator.run(o, ProgressListener.NONE);
        GroundTruth.Episode ep = FleetSimulator.readGroundTruth(tmp.resolve("fleet").resolve(FleetSimulator.GROUND_TRUTH))
                .episodes().get(0);
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            String token = RobotTokens.add(lake, List.of(ep.robotId())).get(0).token();
            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(new LabelHistoryRow(
                    ep.episodeId(), ep.robotId(), "failure", "e_stop", "label-rules-1", "fleet.episodes/0=2", -1, "g", 5)),
                    Set.of()).commit();
            try (FleetGateway gateway = FleetGateway.start(lake, GatewayOptions.builder().build());
                    FleetClient client = FleetClient.builder(gateway.target()).token(token).build()) {
                client.upload(tmp.resolve("fleet").resolve(ep.file()), ep.robotId(), ep.episodeId(), FileKind.MCAP,
                        UploadListener.NONE);
                EpisodeRow row = null;
                long until = System.nanoTime() + 60_000_000_000L;
                while (System.nanoTime() < until) {
                    row = episode(lake);
                    if (row != null && row.streamLabel() != null) {
                        break;
                    }
                    Thread.sleep(100);
                }
                assertNotNull(row, "the upload was ingested");
                assertNotNull(row.streamLabel(), "the label that came first is on the ingested episode");
                assertEquals(ep.episodeId(), row.streamLabel().streamEpisodeId());
                assertEquals("e_stop", row.streamLabel().rule());
                assertEquals(ep.failureCause() == null ? "success" : "failure", row.outcome(),
                        "the recording's outcome is kept");
                assertEquals("failure", row.effectiveOutcome());
            }
        }
    }

    private static EpisodeRow episode(Lake lake) {
        lake.refresh();
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            List<EpisodeRow> rows = t.episodes(ScanRequest.all());
            return rows.isEmpty() ? null : rows.get(0);
        }
    }
}
