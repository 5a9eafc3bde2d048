package io.flywheel.stream.flink;

/**
 * A record the labelling job could not use, on its way to the dead-letter topic: the original key and value, where
 * it came from and why. A Flink POJO.
 */
public class DeadLetter {
    /** Dead-letter reason: did not decode or lacked its ids. */
    public static final String MALFORMED = "malformed";
    /** Dead-letter reason: its episode's window had closed. */
    public static final String LATE = "late";
    /** Dead-letter reason: no start event came for its episode within the allowed lateness. */
    public static final String UNKNOWN_EPISODE = "unknown_episode";

    public String topic;
    public int partition;
    public long offset;
    public byte[] key;
    public byte[] value;
    /** {@link #MALFORMED}, {@link #LATE} or {@link #UNKNOWN_EPISODE}. */
    public String reason;
    public String detail;

    public DeadLetter() {}

    static DeadLetter of(FleetRecord r, String reason, String detail) {
        DeadLetter d = new DeadLetter();
        d.topic = r.topic;
        d.partition = r.partition;
        d.offset = r.offset;
        d.key = r.key;
        d.value = r.value;
        d.reason = reason;
        d.detail = detail;
        return d;
    }

    /** @return the log line: reason, topic, partition, offset, detail */
    public String describe() {
        return "dead letter (" + reason + "): " + topic + " partition " + partition + " offset " + offset + ": " + detail;
    }
}
