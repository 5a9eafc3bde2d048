package io.flywheel.curate.align;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.align.StreamTimeline;
import io.flywheel.align.TopicStream;
import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.ingest.Episode;
import io.flywheel.ingest.Ingest;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.RobotProfile;
import io.flywheel.ingest.Recording;
import io.flywheel.ingest.StreamData;
import io.flywheel.ingest.StreamRole;

/**
 * The message times of an episode's alignable streams, read again from its raw files (the lake keeps only each
 * frame's pairing, not every message): what the alignment timeline draws and the console re-aligns. Alignable:
 * cameras, and state, action and gripper streams with numeric values; each stream's usable times (its timestamp rule
 * resolved, unusable stamps left out), ascending.
 *
 * @param episodeId the episode
 * @param sourceFiles the raw files read (its {@code source_files})
 * @param streams topic to its usable message times (ascending, int64 ns) and their message indices as payload, in
 *     recording order
 * @param roles topic to its role, lower case ({@code camera}, {@code state}, {@code action}, {@code gripper})
 */
public record EpisodeStreams(String episodeId, List<String> sourceFiles, Map<String, TopicStream> streams,
                             Map<String, String> roles) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public EpisodeStreams {
        sourceFiles = List.copyOf(sourceFiles);
        streams = Collections.unmodifiableMap(new LinkedHashMap<>(streams));
        roles = Collections.unmodifiableMap(new LinkedHashMap<>(roles));
    }

    /**
     * Reads the episode's recording: its one raw file, or the folder of its files (a split rosbag2 recording).
     *
     * @param episodeId the episode
     * @param sourceFiles its {@code source_files} ({@link io.flywheel.curate.SourceFiles#uris}), in recording order
     * @param resolve a source file's local path (the console checks that the lake registers it)
     * @return its alignable streams
     * @throws BadInputException when the episode has no source files, or its raw files no longer hold it
     * @throws IOException when a raw file cannot be read
     */
    public static EpisodeStreams read(String episodeId, List<String> sourceFiles, Function<String, Path> resolve)
            throws IOException {
        return read(episodeId, sourceFiles, Map.of(), resolve);
    }

    /**
     * @param metadataJson an {@code episodes.metadata} value, or null
     * @return the timelines a profile or option set at ingest ({@code timelines}: topic -> {@code stamps} /
     *     {@code log_time}); empty when none, or the metadata is not JSON
     */
    public static Map<String, StreamTimeline> timelines(String metadataJson) {
        Map<String, StreamTimeline> out = new LinkedHashMap<>();
        if (metadataJson == null || metadataJson.isEmpty()) {
            return out;
        }
        try {
            JSON.readTree(metadataJson).path(IngestJob.TIMELINES).fields()
                    .forEachRemaining(e -> out.put(e.getKey(), StreamTimeline.parse(e.getValue().asText())));
        } catch (IOException | IllegalArgumentException e) {
            return new LinkedHashMap<>();
        }
        return out;
    }

    /**
     * As {@link #read(String, List, Function)}, with the timelines the episode was ingested on ({@link #timelines}),
     * so that each stream's times are those its frames were paired on.
     *
     * @param timelines topic -> timeline set at ingest; the others follow the default ({@code auto})
     */
    public static EpisodeStreams read(String episodeId, List<String> sourceFiles, Map<String, StreamTimeline> timelines,
                                      Function<String, Path> resolve) throws IOException {
        if (sourceFiles.isEmpty()) {
            throw new BadInputException("episode '" + episodeId + "' has no source_files in its metadata");
        }
        List<Path> paths = new ArrayList<>();
        for (String f : sourceFiles) {
            paths.add(resolve.apply(f));
        }
        RobotProfile.Builder profile = RobotProfile.builder();
        timelines.forEach(profile::timeline);
        Recording rec = Ingest.read(paths.size() > 1 ? paths.get(0).getParent() : paths.get(0),
                IngestOptions.builder().profile(profile.build()).build());
        Episode ep = rec.episodes().stream().filter(e -> e.episodeId().equals(episodeId)).findFirst().orElseThrow(
                () -> new BadInputException("the raw files of episode '" + episodeId + "' no longer hold it ("
                        + sourceFiles + ")"));
        Map<String, TopicStream> out = new LinkedHashMap<>();
        Map<String, String> roles = new LinkedHashMap<>();
        for (StreamData s : ep.streams()) {
            boolean numeric = s.values() != null && s.values().length > 0 && s.values()[0] != null;
            if (s.size() == 0 || !(s.role() == StreamRole.CAMERA || numeric && (s.role() == StreamRole.STATE
                    || s.role() == StreamRole.ACTION || s.role() == StreamRole.GRIPPER))) {
                continue;
            }
            int[] usable = s.timestamps().resolved().usable();
            if (usable.length == 0) {
                continue;
            }
            out.put(s.topic(), TopicStream.builder(s.topic()).timestamps(s.timestamps().resolved().usableTimesNs())
                    .payload(usable).sortIfNeeded(true).build());
            roles.put(s.topic(), s.role().name().toLowerCase(Locale.ROOT));
        }
        return new EpisodeStreams(episodeId, sourceFiles, out, roles);
    }

    /**
     * @param topic a stream
     * @return its usable message times, ascending, int64 ns
     * @throws NotFoundException when the raw files hold no alignable stream of that name
     */
    public long[] timesNs(String topic) {
        TopicStream s = streams.get(topic);
        if (s == null) {
            throw new NotFoundException("stream '" + topic + "' not found in the raw files of episode " + episodeId
                    + " (" + sourceFiles + "); its alignable streams: " + String.join(", ", streams.keySet()));
        }
        return s.timestampsNs();
    }
}
