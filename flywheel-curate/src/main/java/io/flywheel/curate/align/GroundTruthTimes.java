package io.flywheel.curate.align;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.curate.JsonFiles;
import io.flywheel.error.BadInputException;
import io.flywheel.rows.EpisodeRow;

/**
 * The true message times of a simulated fleet, from its {@code ground_truth.json} ({@code io.flywheel.sim.GroundTruth}
 * writes it): per episode file and per stream, the true time of message k is {@code nominal_start_ns + k * period_ns
 * + deviation_ns[k]}, and the device stamps it {@code clock_offset_ns} later (plus jitter). Read for the true-error
 * columns of the alignment report. Only the fields used are read and checked; the rest of the file may change.
 */
public final class GroundTruthTimes {
    /** What the file is, for messages. */
    public static final String EXPECTED = "a simulator's ground_truth.json";

    private final Map<String, Episode> byFile = new HashMap<>();

    private GroundTruthTimes() {}

    /** One episode's streams. */
    public static final class Episode {
        private final Map<String, JsonNode> streams = new HashMap<>();

        private Episode() {}

        /**
         * @param topic the stream
         * @param stampNs a message's stamp (the time the lake holds for it), int64 ns
         * @return the true time of that message, int64 ns: the stream's message whose stamp it must be, found as the
         *     nearest true time to {@code stampNs - clock_offset_ns}; null for a topic the episode does not have
         */
        public Long trueTime(String topic, long stampNs) {
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
     *     with "topic", "nominal_start_ns", "period_ns" &gt; 0, "clock_offset_ns", "count"), optionally
     *     "joint_states" and "commands" with the same fields
     */
    public static GroundTruthTimes read(Path file) throws IOException {
        return of(file.toString(), JsonFiles.read(file, EXPECTED));
    }

    /**
     * @param source the file name, for messages
     * @param root the file's JSON tree
     * @return its streams per episode file
     * @throws BadInputException naming the source (and the episode) as {@link #read}
     */
    public static GroundTruthTimes of(String source, JsonNode root) {
        if (root == null || !root.path("episodes").isArray()) {
            throw new BadInputException(source + ": not a simulator ground_truth.json (no \"episodes\" list)");
        }
        GroundTruthTimes t = new GroundTruthTimes();
        int i = 0;
        for (JsonNode e : root.get("episodes")) {
            String where = source + ": episode " + i++;
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

    /**
     * @param row a lake episode
     * @return the ground truth of the episode whose source file path ends with a ground-truth episode's file, or null
     *     when none does
     */
    public Episode episode(EpisodeRow row) {
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
