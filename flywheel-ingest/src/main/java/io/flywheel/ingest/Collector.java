package io.flywheel.ingest;

import io.flywheel.align.TimestampRule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Gathers the streams and metadata of one episode while its files are read. Not thread-safe. */
final class Collector {
    final RobotProfile profile;
    final Map<String, StreamBuilder> streams = new LinkedHashMap<>();
    final List<RobotProfile.Channel> channels = new ArrayList<>();
    final Map<String, String> episodeMetadata = new LinkedHashMap<>();
    final Map<String, String> recordingMetadata = new LinkedHashMap<>();
    /** The messages of the frame-skip channel ({@link FrameSkips}), in file order. */
    final List<FrameSkips.Skip> frameSkips = new ArrayList<>();
    private final Map<String, RobotProfile.Guess> sourceGuesses = new LinkedHashMap<>();
    /** When not null: the role of every topic (a reader that re-reads known camera topics). */
    private final StreamRole forcedRole;

    Collector(RobotProfile profile) {
        this(profile, null);
    }

    /** A collector giving every topic the role {@code forcedRole} (null: profile or guess). */
    Collector(RobotProfile profile, StreamRole forcedRole) {
        this.profile = profile;
        this.forcedRole = forcedRole;
    }

    /** The role of a topic: from the profile when it names roles, else guessed. */
    StreamRole role(String topic, String type) {
        if (forcedRole != null) return forcedRole;
        return profile.namesRoles() ? profile.role(topic) : RobotProfile.guess(topic, type).role();
    }

    /** The smallest log time of any message read so far, ns; {@link Long#MAX_VALUE} when none. */
    long minLogTimeNs() {
        long m = Long.MAX_VALUE;
        for (StreamBuilder s : streams.values()) m = Math.min(m, s.minLogTimeNs());
        return m;
    }

    /** The builder of a topic, created at first sight (the first channel id seen for the topic is kept). */
    StreamBuilder stream(String topic, int channelId, String type) {
        return stream(topic, channelId, type, null);
    }

    /** As {@link #stream(String, int, String)}, with a source-specific guess used when the profile names no roles. */
    StreamBuilder stream(String topic, int channelId, String type, StreamRole guess) {
        StreamBuilder b = streams.get(topic);
        if (b == null) {
            StreamRole r = forcedRole != null || profile.namesRoles() || guess == null ? role(topic, type) : guess;
            if (guess != null) sourceGuesses.put(topic, new RobotProfile.Guess(guess, "source layout (" + type + ")"));
            b = new StreamBuilder(topic, channelId, r, type);
            streams.put(topic, b);
            channels.add(new RobotProfile.Channel(topic, channelId, type));
        }
        return b;
    }

    /** @return the profile as applied to the topics seen */
    RobotProfile resolvedProfile() {
        return profile.resolve(channels, sourceGuesses);
    }

    /** Builds the episode; the log clock is a wall clock when the largest log time of any stream says so. */
    Episode episode(String recordingId, int index, RobotProfile resolved, String robotId, TimestampRule rule) {
        long maxLog = Long.MIN_VALUE;
        for (StreamBuilder s : streams.values()) maxLog = Math.max(maxLog, s.maxLogTimeNs());
        boolean wallClock = rule.isWallClock(maxLog);
        List<StreamData> out = new ArrayList<>();
        streams.values().stream().sorted(java.util.Comparator.comparingInt(s -> s.channelId))
                .forEach(s -> out.add(s.build(rule, wallClock, resolved.timeline(s.topic).orElse(rule.timeline()))));
        Map<String, String> md = episodeMetadata;
        Map<String, String> mapped = resolved.metadataKeys();
        String task = metadataField(md, mapped, "task", "task", "language_instruction", "instruction", "task_name",
                "task_description");
        if (task.isEmpty()) {
            for (StreamData s : out) {
                if (s.role() == StreamRole.TASK && s.texts() != null) {
                    for (String t : s.texts()) {
                        if (t != null && !t.isEmpty()) { task = t; break; }
                    }
                }
                if (!task.isEmpty()) break;
            }
        }
        String outcome = metadataField(md, mapped, "outcome", "outcome", "result");
        if (outcome.isEmpty()) {
            for (StreamData s : out) {
                if (s.role() == StreamRole.OUTCOME && s.texts() != null && !s.texts().isEmpty()) {
                    String t = s.texts().get(s.texts().size() - 1);
                    if (t != null) outcome = t;
                }
            }
        }
        outcome = normaliseOutcome(outcome);
        String master = resolved.master().orElse("");
        if (!master.isEmpty() && !streams.containsKey(master)) master = "";
        String robot = robotId.isEmpty() ? metadataField(md, mapped, "robot_id", "robot_id", "robot") : robotId;
        return new Episode(recordingId + "-e" + (index < 10 ? "0" : "") + index, index, task, outcome, robot,
                metadataField(md, mapped, "scene", "scene", "scene_name", "environment", "location"),
                metadataField(md, mapped, "operator", "operator", "operator_name", "operator_id", "teleoperator"),
                md, master, out, frameSkips);
    }

    /**
     * One episode field from the recording's metadata: the key the profile maps to it ({@code metadata_keys}),
     * else the first of {@code keys} found unprefixed (an {@code episode} record), else the first found as the
     * key of any other metadata record ({@code task_info.task}), records in the order read.
     *
     * @return the value, "" when none of the keys is present
     */
    static String metadataField(Map<String, String> md, Map<String, String> mapped, String field, String... keys) {
        String m = mapped.get(field);
        if (m != null) {
            return md.getOrDefault(m, "");
        }
        for (String k : keys) {
            String v = md.get(k);
            if (v != null && !v.isBlank()) return v;
        }
        for (String k : keys) {
            for (Map.Entry<String, String> e : md.entrySet()) {
                String key = e.getKey();
                if (key.endsWith("." + k)
                        && !e.getValue().isBlank()) {
                    return e.getValue();
                }
            }
        }
        return "";
    }

    static String normaliseOutcome(String s) {
        String t = s == null ? "" : s.trim().toLowerCase(java.util.Locale.ROOT);
        return switch (t) {
            case "success", "succeeded", "successful", "true", "1" -> "success";
            case "failure", "failed", "fail", "false", "0" -> "failure";
            case "intervention", "intervened" -> "intervention";
            case "needs_review", "needs review", "review" -> "needs_review";
            default -> "unknown";
        };
    }
}
