package io.flywheel.ingest;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.json.JsonMessageDecoder;

/**
 * The frame-skip channel of a recording streamed live through the fleet gateway: one JSON message per camera frame
 * the robot did not send because its pHash was within the filter's threshold of the last frame it sent on that topic.
 * The gateway writes it ({@code /flywheel/frame_skips}, message encoding {@code json}, schema {@code flywheel.FrameSkip}
 * in {@code jsonschema}: {@code frame_skip.schema.json} beside this class), each message logged at the skipped
 * frame's log time:
 * <pre>{@code {"topic": "/head_camera/image_raw/compressed", "log_time": {"sec": 1767225600, "nsec": 33333333},
 *  "repeats_log_time": {"sec": 1767225600, "nsec": 0}, "hamming_distance": 2, "threshold": 4}}</pre>
 *
 * <p>Ingest reads it as the record of skips it is, not as a stream: the channel gets no stream, role or frame column;
 * a camera's quality metrics count its skipped frames as received ({@link io.flywheel.quality.StreamMetrics#measure(
 * String, String, long[], Double, long, long, long[])}), the episode metadata counts them per topic
 * ({@code skipped_frames}), and a frame row whose camera had no message within tolerance because that camera's frame
 * was skipped is flagged {@code skipped:<topic>} instead of {@code unmatched:<topic>}. Skipped frames get no frame row
 * and no image: on the master camera a skip is a master tick less (the state and action messages of that moment stay
 * in the raw file, unaligned); on another camera the frame row has no image of it.
 */
public final class FrameSkips {
    /** The channel's topic. */
    public static final String TOPIC = "/flywheel/frame_skips";
    /** The channel's message encoding. */
    public static final String MESSAGE_ENCODING = "json";
    /** The schema's name. */
    public static final String SCHEMA_NAME = "flywheel.FrameSkip";
    /** The schema's encoding. */
    public static final String SCHEMA_ENCODING = "jsonschema";

    private static final byte[] SCHEMA = load();

    private FrameSkips() {}

    /**
     * One skipped frame.
     *
     * @param topic the camera topic
     * @param logTimeNs the skipped frame's log time, ns since the Unix epoch
     * @param repeatsLogTimeNs the log time of the frame it repeats (the last one sent on the topic), ns
     * @param hammingDistance pHash distance of the two, 0..64 bits
     * @param thresholdBits the filter's threshold, 0..64 bits
     */
    public record Skip(String topic, long logTimeNs, long repeatsLogTimeNs, int hammingDistance, int thresholdBits) {}

    /** @return the JSON schema (UTF-8), a copy */
    public static byte[] schema() {
        return SCHEMA.clone();
    }

    /** @return the message of one skip, UTF-8 JSON as the class comment shows */
    public static byte[] encode(Skip s) {
        StringBuilder b = new StringBuilder(160).append("{\"topic\":");
        quote(b, s.topic());
        b.append(",\"log_time\":");
        time(b, s.logTimeNs());
        b.append(",\"repeats_log_time\":");
        time(b, s.repeatsLogTimeNs());
        b.append(",\"hamming_distance\":").append(s.hammingDistance()).append(",\"threshold\":")
                .append(s.thresholdBits()).append('}');
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param data one message of the channel
     * @param file the recording, for the error
     * @param offset where the message is, for the error
     * @return the skip it records
     * @throws MalformedDataException when it is not a FrameSkip message (the field that is wrong)
     */
    public static Skip decode(ByteBuffer data, String file, long offset) throws MalformedDataException {
        Object tree;
        try {
            tree = JsonMessageDecoder.schemaless().decode(data);
        } catch (DecodeException e) {
            throw new MalformedDataException(file, offset, TOPIC + " message is not JSON: " + e.getMessage());
        }
        if (!(tree instanceof Map<?, ?> m) || !(m.get("topic") instanceof String topic) || topic.isEmpty()) {
            throw new MalformedDataException(file, offset, TOPIC + " message has no \"topic\" string");
        }
        return new Skip(topic, time(m, "log_time", file, offset), time(m, "repeats_log_time", file, offset),
                bits(m, "hamming_distance", file, offset), bits(m, "threshold", file, offset));
    }

    private static long time(Map<?, ?> m, String key, String file, long offset) throws MalformedDataException {
        if (m.get(key) instanceof Map<?, ?> t && t.get("sec") instanceof Number sec && t.get("nsec") instanceof Number ns
                && sec.longValue() >= 0 && ns.longValue() >= 0 && ns.longValue() < 1_000_000_000L) {
            return Math.addExact(Math.multiplyExact(sec.longValue(), 1_000_000_000L), ns.longValue());
        }
        throw new MalformedDataException(file, offset, TOPIC + " message: \"" + key + "\" is not {\"sec\", \"nsec\"}");
    }

    private static int bits(Map<?, ?> m, String key, String file, long offset) throws MalformedDataException {
        if (m.get(key) instanceof Integer v && v >= 0 && v <= 64) {
            return v;
        }
        throw new MalformedDataException(file, offset, TOPIC + " message: \"" + key + "\" is not an integer 0..64");
    }

    private static void time(StringBuilder b, long ns) {
        b.append("{\"sec\":").append(Math.floorDiv(ns, 1_000_000_000L)).append(",\"nsec\":")
                .append(Math.floorMod(ns, 1_000_000_000L)).append('}');
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        b.append('"');
    }

    private static byte[] load() {
        try (InputStream in = FrameSkips.class.getResourceAsStream("frame_skip.schema.json")) {
            if (in == null) {
                throw new IllegalStateException("frame_skip.schema.json is missing from the flywheel-ingest jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
