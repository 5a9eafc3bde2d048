package io.flywheel.stream.accuracy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;
import io.flywheel.stream.rules.Outcome;

/**
 * The true stream outcome of episodes, read from a JSON file: an object whose {@code episodes} array holds one object
 * per episode with {@code robot_id}, {@code episode_id} (the stream's id of it) and its truth, {@code stream_outcome}
 * ({@code success}, {@code failure} or {@code needs_review}) or, when absent, {@code outcome} as a recording states
 * it ({@code success}; {@code failure} or {@code failure: <cause>}; {@code intervention} or {@code needs_review},
 * both needs_review). The simulator's {@code ground_truth.json} is such a file.
 */
public final class LabelTruth {
    private static final ObjectMapper JSON = new ObjectMapper();

    private LabelTruth() {}

    /** @return the key of an episode in {@link #read}'s map and in label maps: {@code robot/episode} */
    public static String key(String robotId, String episodeId) {
        return robotId + "/" + episodeId;
    }

    /**
     * @param file the truth file
     * @return the truth by {@link #key}, in file order
     * @throws BadInputException naming the file and the entry when it is not such a file
     * @throws IOException when it cannot be read
     */
    public static Map<String, Outcome> read(Path file) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readAllBytes(file));
        } catch (JsonProcessingException e) {
            throw new BadInputException(file + ": not JSON: " + e.getOriginalMessage() + " at line "
                    + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr());
        }
        JsonNode eps = root == null ? null : root.get("episodes");
        if (eps == null || !eps.isArray()) {
            throw new BadInputException(file + ": expected a JSON object with an \"episodes\" array of {robot_id,"
                    + " episode_id, stream_outcome | outcome}");
        }
        Map<String, Outcome> out = new LinkedHashMap<>();
        for (int i = 0; i < eps.size(); i++) {
            JsonNode e = eps.get(i);
            String robot = text(e, "robot_id");
            String id = text(e, "episode_id");
            if (robot == null || id == null) {
                throw new BadInputException(file + ": episodes[" + i + "]: robot_id and episode_id must be non-empty"
                        + " strings");
            }
            String so = text(e, "stream_outcome");
            String o = so != null ? so : text(e, "outcome");
            Outcome truth = so != null ? Outcome.parse(so) : fromRecording(o);
            if (truth == null) {
                throw new BadInputException(file + ": episodes[" + i + "] (" + key(robot, id) + "): "
                        + (so != null ? "stream_outcome" : "outcome") + " '" + o + "' is not one of success, failure,"
                        + " needs_review" + (so != null ? "" : ", intervention"));
            }
            if (out.put(key(robot, id), truth) != null) {
                throw new BadInputException(file + ": episodes[" + i + "]: " + key(robot, id) + " is listed twice");
            }
        }
        return out;
    }

    private static Outcome fromRecording(String o) {
        if (o == null) {
            return null;
        }
        String t = o.strip().toLowerCase(Locale.ROOT);
        if (t.equals("failure") || t.startsWith("failure:")) {
            return Outcome.FAILURE;
        }
        if (t.equals("intervention")) {
            return Outcome.NEEDS_REVIEW;
        }
        return Outcome.parse(t);
    }

    private static String text(JsonNode e, String field) {
        JsonNode n = e == null ? null : e.get(field);
        return n != null && n.isTextual() && !n.asText().isBlank() ? n.asText() : null;
    }
}
