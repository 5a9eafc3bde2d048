package io.flywheel.rows;

import java.util.List;

/**
 * The rows one recording becomes: committed together, all or nothing.
 *
 * @param recordingId the recording's id (shared by its files)
 * @param rawFiles one row per raw file of the recording
 * @param episodes one row per episode
 * @param frames every episode's frames
 */
public record RecordingRows(String recordingId, List<RawFileRow> rawFiles, List<EpisodeRow> episodes,
                            List<FrameRow> frames) {
    public RecordingRows {
        rawFiles = List.copyOf(rawFiles);
        episodes = List.copyOf(episodes);
        frames = List.copyOf(frames);
    }
}
