package io.flywheel.enrich.video;

import java.util.Map;
import java.util.Objects;

/**
 * The fields of one foxglove.CompressedVideo message (schema names {@code foxglove.CompressedVideo},
 * {@code foxglove_msgs/msg/CompressedVideo}, {@code foxglove_msgs/CompressedVideo}): a single
 * frame of a compressed video bitstream.
 *
 * @param stampNs the message's {@code timestamp} field in int64 ns since the epoch, or -1 when
 *                absent (frames are timed by log time; the stamp is kept for alignment checks)
 * @param frameId the {@code frame_id} (camera optical frame), "" when absent
 * @param format  the {@code format}, e.g. {@code "h264"}
 * @param data    the {@code data}: one access unit, Annex B for h264/h265
 */
public record CompressedVideoMessage(long stampNs, String frameId, String format, byte[] data) {
    /** @throws NullPointerException when a field is null */
    public CompressedVideoMessage {
        Objects.requireNonNull(frameId, "frameId");
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(data, "data");
    }

    /**
     * Reads the fields from the decoded-message tree of {@code io.flywheel.decode.MessageDecoder}
     * (any encoding: ROS 2 CDR, ROS 1, JSON with base64 {@code data}, protobuf).
     *
     * @param tree the decoded message
     * @return the message
     * @throws IllegalArgumentException when {@code data} is not bytes or {@code format} not a
     *     string (the message says which field and what was found)
     */
    public static CompressedVideoMessage fromTree(Object tree) {
        if (!(tree instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("expected a foxglove.CompressedVideo message (a struct), found "
                    + (tree == null ? "null" : tree.getClass().getSimpleName()));
        }
        Object data = m.get("data");
        if (!(data instanceof byte[] bytes)) {
            throw new IllegalArgumentException("foxglove.CompressedVideo field 'data' must be bytes (uint8[]), found "
                    + (data == null ? "no such field; fields are " + m.keySet() : data.getClass().getSimpleName()));
        }
        Object format = m.get("format");
        if (!(format instanceof String f)) {
            throw new IllegalArgumentException("foxglove.CompressedVideo field 'format' must be a string, found "
                    + (format == null ? "no such field; fields are " + m.keySet() : format.getClass().getSimpleName()));
        }
        Object frameId = m.get("frame_id");
        return new CompressedVideoMessage(stamp(m.get("timestamp")), frameId instanceof String s ? s : "", f, bytes);
    }

    private static long stamp(Object t) {
        if (!(t instanceof Map<?, ?> m)) {
            return -1;
        }
        Long sec = number(m, "sec", "seconds", "secs");
        Long nsec = number(m, "nanosec", "nsec", "nanos", "nsecs");
        if (sec == null) {
            return -1;
        }
        return sec * 1_000_000_000L + (nsec == null ? 0 : nsec);
    }

    private static Long number(Map<?, ?> m, String... keys) {
        for (String k : keys) {
            if (m.get(k) instanceof Number n) {
                return n.longValue();
            }
        }
        return null;
    }
}
