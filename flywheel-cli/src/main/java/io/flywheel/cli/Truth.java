package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.error.BadInputException;
import io.flywheel.rows.EpisodeRow;

/**
 * A simulated fleet's {@code ground_truth.json}, read for {@code align report --truth}: per episode
 * file and per stream, the true time of message k is {@code nominal_start_ns + k * period_ns +
 * deviation_ns[k]}, and the device stamps it {@code clock_offset_ns} later (plus jitter).
 */
final class Truth {
    private final Map<String, Episode> byFile = new HashMap<>();

    /** One episode's streams. */
    static final class Episode {
        private final Map<String, JsonNode> streams = new HashMap<>();

        /**
         * @param topic the stream
         * @param stampNs a message's stamp (the time the lake holds for it)
         * @return the true time of that message: the stream's message whose stamp it must be, found as
         *     the nearest true time to {@code stampNs - clock_offset_ns}; null for an unknown topic
         */
        Long trueTime(String topic, long stampNs) {
            JsonNode s = streams.get(topic);
            if (s == null) {
                return null;
            }
            long start = s.get("nominal_start_ns").asLong();
            long period = s.get("period_ns").asLong();
            long target = stampNs - s.get("clock_offset_ns").asLong();
            long k = Math.round((double) (target - start) / period);
            JsonNode dev = s.get("deviation_ns");
            int count = s.get("count").asInt();
            long best = Long.MAX_VALUE;
            Long bestT = null;
            for (long j = Math.max(0, k - 1); j <= Math.min(count - 1, k + 1); j++) {
                long t = start + j * period + (dev != null && dev.size() > j ? dev.get((int) j).asLong() : 0);
                if (Math.abs(t - target) < best) {
                    best = Math.abs(t - target);
                    bestT = t;
                }
            }
            return bestT;
        }
    }

    /**
     * @param file a simulator's ground_truth.json
     * @return its streams per episode file
     * @throws IOException when the file cannot be read ({@link java.nio.file.NoSuchFileException} when it is missing)
     * @throws BadInputException naming the file (and the line and column, or the episode) when it is not JSON or not
     *     a simulator's ground truth: an object with "episodes", each with a "file" and its "cameras" (by name, each
     *     with "topic",
     *     "nominal_start_ns", "period_ns", "clock_offset_ns", "count"), optionally "joint_states" and "commands"
     */
    static Truth load(Path file) throws IOException {
        JsonNode root = Json.readFile("--truth", file, "a simulator's ground_truth.json");
        if (root == null || !root.path("episodes").isArray()) {
            throw new BadInputException("--truth " + file + ": not a simulator ground_truth.json (no \"episodes\" list)");
        }
        Truth t = new Truth();
        int i = 0;
        for (JsonNode e : root.get("episodes")) {
            String where = "--truth " + file + ": episode " + i++;
            if (!e.path("file").isTextual() || !e.path("cameras").isObject()) {
                throw new BadInputException(where + ": expected \"file\" (text) and \"cameras\" (an object: camera"
                        + " name to stream)");
            }
            Episode ep = new Episode();
            for (JsonNode c : e.get("cameras")) {
                ep.streams.put(stream(c, where + " (" + e.get("file").asText() + "), a camera"), c);
            }
            for (String k : new String[] {"joint_states", "commands"}) {
                if (e.has(k)) {
                    ep.streams.put(stream(e.get(k), where + " (" + e.get("file").asText() + "), " + k), e.get(k));
                }
            }
            t.byFile.put(e.get("file").asText(), ep);
        }
        return t;
    }

    /** @return the stream's topic, after checking that it has the fields {@link Episode#trueTime} reads */
    private static String stream(JsonNode s, String where) {
        for (String k : new String[] {"topic", "nominal_start_ns", "period_ns", "clock_offset_ns", "count"}) {
            if (s.get(k) == null || s.get(k).isNull() || !(k.equals("topic") ? s.get(k).isTextual() : s.get(k).isNumber())) {
                throw new BadInputException(where + ": expected \"" + k + "\" (" + (k.equals("topic") ? "text" : "a number")
                        + ")");
            }
        }
        if (s.get("period_ns").asLong() <= 0) {
            throw new BadInputException(where + ": \"period_ns\" must be > 0, got " + s.get("period_ns").asLong());
        }
        return s.get("topic").asText();
    }

    /** @return the ground truth of the lake episode whose source file ends with a ground-truth file path, or null */
    Episode episode(EpisodeRow row) {
        if (row == null || row.metadataJson() == null) {
            return null;
        }
        for (Map.Entry<String, Episode> e : byFile.entrySet()) {
            if (row.metadataJson().contains(e.getKey() + "\"")) {
                return e.getValue();
            }
        }
        return null;
    }
}
