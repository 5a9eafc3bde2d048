package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;

import java.util.List;

/** The row codecs of the three typed tables: Arrow conversion, key columns, partition key. */
final class Codecs {
    private Codecs() {}

    static final PendingChange.Codec<RawFileRow> RAW_FILES = new PendingChange.Codec<>(TableSchemas.RAW_FILES,
            "sha256", ArrowRows::rawFiles, RawFileRow::sha256);

    static final PendingChange.Codec<EpisodeRow> EPISODES = new PendingChange.Codec<>(TableSchemas.EPISODES,
            "episode_id", ArrowRows::episodes, EpisodeRow::episodeId);

    static final PendingChange.Codec<FrameRow> FRAMES = new PendingChange.Codec<>(TableSchemas.FRAMES,
            List.of("episode_id", "frame_index"), "episode_id", ArrowRows::frames, FrameRow::episodeId,
            r -> List.of(r.episodeId(), r.frameIndex()), "frame_index", FrameRow::frameIndex);
}
