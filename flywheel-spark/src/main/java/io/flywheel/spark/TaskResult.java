package io.flywheel.spark;

import java.io.Serializable;
import java.util.List;

/**
 * What one ingest task gave: the recording's rows as staged documents ({@link io.flywheel.ingest.StagedRows}), or the
 * reason it failed (then no rows).
 *
 * @param input the recording's file or folder
 * @param recordingId its content id; null when it failed
 * @param format the source format's name
 * @param rawFiles one entry per raw file
 * @param episodes one entry per episode
 * @param frames one entry per frame
 * @param failure why the recording could not be read; null when it was
 * @param topics the recording's stream topics (none when it failed)
 */
record TaskResult(String input, String recordingId, String format, List<StagedRawFile> rawFiles,
                  List<StagedEpisode> episodes, List<StagedFrame> frames, Failure failure, List<String> topics)
        implements Serializable {
    TaskResult {
        rawFiles = List.copyOf(rawFiles);
        episodes = List.copyOf(episodes);
        frames = List.copyOf(frames);
        topics = List.copyOf(topics);
    }

    static TaskResult failed(String input, String format, Failure f) {
        return new TaskResult(input, null, format, List.of(), List.of(), List.of(), f, List.of());
    }

    /** @param json the row's document */
    record StagedRawFile(String recordingId, String uri, String sha256, String json) implements Serializable {}

    /** @param json the row's document */
    record StagedEpisode(String recordingId, String episodeId, long frameCount, String json) implements Serializable {}

    /** @param json the row's document; {@code timestampNs}: master clock, ns since the Unix epoch */
    record StagedFrame(String recordingId, String episodeId, int frameIndex, long timestampNs, String json)
            implements Serializable {}

    /**
     * @param message what was wrong and where (names the file)
     * @param kind the error kind's stable name ({@code bad_input}, {@code not_found}, ...)
     */
    record Failure(String input, String message, String kind) implements Serializable {}
}
