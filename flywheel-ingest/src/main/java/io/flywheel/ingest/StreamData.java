package io.flywheel.ingest;

import java.util.List;

/**
 * All messages of one topic within one episode, column-wise. Arrays are indexed by message, in the order
 * the messages were read (file order; for split recordings, file after file). Arrays are shared, not
 * copied: treat them as read-only. (Being arrays, they make {@code equals} an identity comparison.)
 *
 * @param topic the topic (RLDS: the feature key, e.g. {@code steps/observation/image_0})
 * @param channelId the MCAP channel id / ROS 1 connection id / RLDS feature ordinal; used to pick the
 *     default master camera (lowest id)
 * @param role what the stream means
 * @param messageType schema name as recorded, e.g. {@code sensor_msgs/msg/JointState}
 * @param timeNs chosen time per message, int64 ns since the Unix epoch ({@link io.flywheel.align.TimestampRule}
 *     of flywheel-core); 0 for a message with no usable time (counted in {@link TimestampReport#unresolved()})
 * @param logTimeNs log time per message, ns (RLDS: the nominal time)
 * @param headerStampNs header stamp per message, ns; 0 when the message has no header or its stamp is 0
 * @param values numeric value per message for STATE (JointState.position, or the message's numeric fields
 *     in order), ACTION (MultiArray.data; Twist as [linear x y z, angular x y z]), GRIPPER ({@code double[1]})
 *     and numeric OTHER streams; null for CAMERA / TASK / OUTCOME and for streams not decoded
 * @param names names of the value components (joint names, field paths); empty when unknown
 * @param locators one image locator per message for CAMERA streams, else null; an entry is null when the
 *     payload cannot be located as raw bytes (e.g. base64 JSON)
 * @param texts one string per message for TASK / OUTCOME streams (String.data), else null
 * @param timestamps the timestamp report of this stream
 */
public record StreamData(String topic, int channelId, StreamRole role, String messageType, long[] timeNs,
                         long[] logTimeNs, long[] headerStampNs, double[][] values, List<String> names,
                         RawLocator[] locators, List<String> texts, TimestampReport timestamps) {
    public StreamData {
        int n = timeNs.length;
        if (logTimeNs.length != n || headerStampNs.length != n || (values != null && values.length != n)
                || (locators != null && locators.length != n) || (texts != null && texts.size() != n)) {
            throw new IllegalArgumentException("stream " + topic + ": per-message arrays differ in length");
        }
        names = names == null ? List.of() : List.copyOf(names);
        texts = texts == null ? null : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(texts));
    }

    /** @return number of messages */
    public int size() {
        return timeNs.length;
    }

    /** @return first chosen time, ns, or 0 when empty */
    public long startNs() {
        return timeNs.length == 0 ? 0 : timeNs[0];
    }

    /** @return last chosen time, ns, or 0 when empty */
    public long endNs() {
        return timeNs.length == 0 ? 0 : timeNs[timeNs.length - 1];
    }
}
