package io.flywheel.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One episode: the streams of one demonstration or run.
 *
 * @param episodeId unique id: {@code <recordingId>-e<index>}
 * @param index 0-based position of the episode in its recording
 * @param task task text (metadata {@code task}, else the first TASK message), or "" when unknown
 * @param outcome {@code success}, {@code failure}, {@code intervention} or {@code unknown}
 * @param robotId robot id, or "" when unknown
 * @param scene scene, or "" when unknown
 * @param operator operator, or "" when unknown
 * @param metadata string metadata (MCAP metadata records flattened; RLDS {@code episode_metadata/...})
 * @param masterTopic the master clock's topic: the profile's master, else the camera with the lowest
 *     channel id, else the first STATE stream (JointState first); "" when the episode has none of these
 * @param streams the streams, in channel-id order
 * @param frameSkips the frames the robot skipped on purpose ({@link FrameSkips}: a live stream's frame filter), in
 *     file order; empty for a recording without a frame-skip channel
 */
public record Episode(String episodeId, int index, String task, String outcome, String robotId, String scene,
                      String operator, Map<String, String> metadata, String masterTopic, List<StreamData> streams,
                      List<FrameSkips.Skip> frameSkips) {
    public Episode {
        // in the recording's order: Map.copyOf iterates in an order that changes from JVM to JVM, and this map
        // becomes JSON in the lake rows
        Map.copyOf(metadata); // refuses null keys and values
        metadata = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(metadata));
        streams = List.copyOf(streams);
        frameSkips = List.copyOf(frameSkips);
    }

    /** @return the stream of a topic, if present */
    public Optional<StreamData> stream(String topic) {
        return streams.stream().filter(s -> s.topic().equals(topic)).findFirst();
    }

    /** @return the streams with a role, in channel-id order */
    public List<StreamData> streams(StreamRole role) {
        List<StreamData> out = new ArrayList<>();
        for (StreamData s : streams) {
            if (s.role() == role) out.add(s);
        }
        return out;
    }

    /** @return the master stream, if the episode has one */
    public Optional<StreamData> master() {
        return masterTopic.isEmpty() ? Optional.empty() : stream(masterTopic);
    }

    /** @return earliest non-zero chosen time over all streams, ns; 0 when none */
    public long startNs() {
        long m = Long.MAX_VALUE;
        for (StreamData s : streams) for (long t : s.timeNs()) if (t != 0 && t < m) m = t;
        return m == Long.MAX_VALUE ? 0 : m;
    }

    /** @return latest chosen time over all streams, ns; 0 when none */
    public long endNs() {
        long m = 0;
        for (StreamData s : streams) for (long t : s.timeNs()) if (t > m) m = t;
        return m;
    }

    /** @return total messages over all streams */
    public long messageCount() {
        long n = 0;
        for (StreamData s : streams) n += s.size();
        return n;
    }
}
