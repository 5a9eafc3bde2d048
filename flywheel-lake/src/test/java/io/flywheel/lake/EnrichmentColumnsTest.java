package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The enrichment fields round-trip, and column updates rewrite rows in one commit without touching other episodes. */
class EnrichmentColumnsTest {
    @Test
    void upsertedFramesAndEpisodesCarryTheirEnrichment(@TempDir Path tmp) {
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            Fixtures.ingest(lake, 1, 3);
            Fixtures.ingest(lake, 2, 3);
            List<FrameRow> before;
            List<EpisodeRow> eps;
            try (LakeTable f = lake.table("frames"); LakeTable e = lake.table("episodes")) {
                before = f.frames(ScanRequest.builder().filter("episode_id = '" + Fixtures.episodeId(1) + "'").build());
                eps = e.episodes(ScanRequest.builder().filter("episode_id = '" + Fixtures.episodeId(1) + "'").build());
            }
            assertTrue(before.get(0).enrichment().isEmpty());
            assertNull(eps.get(0).enrichedAtNs());
            List<FrameRow> enriched = new ArrayList<>();
            for (FrameRow r : before) {
                List<ImageLocator> imgs = new ArrayList<>();
                List<ImageEnrichment> en = new ArrayList<>();
                for (int k = 0; k < r.images().size(); k++) {
                    imgs.add(r.images().get(k).withSize(64, 48));
                    en.add(k == 0 ? new ImageEnrichment(12.5, false, r.frameIndex() == 0 ? null : 0.25, true,
                            0x8000_0000_0000_0001L + r.frameIndex(), new byte[] {(byte) 0xFF, (byte) 0xD8, 1},
                            new float[] {0.6f, 0.8f}, null) : ImageEnrichment.failed("bad bytes"));
                }
                enriched.add(r.withEnrichment(imgs, en, "open", "idle"));
            }
            EpisodeRow ep = eps.get(0).withEnrichment(new float[] {1f, 0f}, "m", "abc", 42L, "{\"stride\":1}");
            CommitResult c = lake.begin("enrich").updateFrames(List.of("images", "gripper_state", "phase"), enriched)
                    .updateEpisodes(List.of("embedding", "embedding_model", "embedding_sha256", "enriched_at_ns",
                            "enrichment"), List.of(ep)).commit();
            assertEquals(before.size(), c.table("frames").rowsWritten());
            assertEquals(c.table("frames").fromVersion() + 1, c.table("frames").toVersion(), "one commit");
            try (LakeTable f = lake.table("frames"); LakeTable e = lake.table("episodes")) {
                List<FrameRow> all = new ArrayList<>(f.frames(ScanRequest.all()));
                assertEquals(6, all.size(), "no row added or lost");
                List<FrameRow> after = new ArrayList<>(all.stream()
                        .filter(r -> r.episodeId().equals(Fixtures.episodeId(1))).toList());
                after.sort(Comparator.comparingInt(FrameRow::frameIndex));
                assertEquals(enriched, after);
                assertEquals(Integer.valueOf(64), after.get(1).images().get(0).width());
                assertEquals("bad bytes", after.get(1).enrichment().get(after.get(1).images().size() - 1).decodeError());
                assertTrue(all.stream().filter(r -> r.episodeId().equals(Fixtures.episodeId(2)))
                        .allMatch(r -> r.enrichment().isEmpty() && r.phase() == null));
                EpisodeRow back = e.episodes(ScanRequest.builder().filter("enriched_at_ns IS NOT NULL").build()).get(0);
                assertEquals(ep, back);
                assertEquals(1, e.countRows("enriched_at_ns IS NULL"));
            }
        }
    }
}
