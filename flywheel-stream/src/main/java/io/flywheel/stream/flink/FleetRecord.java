package io.flywheel.stream.flink;

/**
 * One record of the fleet topics as the labelling job carries it: where it came from, its raw key and value (for the
 * dead-letter topic and to label from) and what decoding found. A Flink POJO (public fields, no-argument
 * constructor).
 */
public class FleetRecord {
    /** Decoded as an episode start event. */
    public static final int STARTED = 1;
    /** Decoded as an episode end event. */
    public static final int ENDED = 2;
    /** Decoded as an observation summary. */
    public static final int OBSERVATION = 3;
    /** Decoded as an alert. */
    public static final int ALERT = 4;
    /** Did not decode, or lacked its ids: {@link #error} says why. */
    public static final int MALFORMED = 0;

    public String topic;
    public int partition;
    public long offset;
    public byte[] key;
    public byte[] value;
    /** {@link #STARTED}, {@link #ENDED}, {@link #OBSERVATION}, {@link #ALERT} or {@link #MALFORMED}. */
    public int kind;
    /** The robot; empty when malformed. */
    public String robotId = "";
    /** The episode; empty when malformed or for an alert outside any episode. */
    public String episodeId = "";
    /** The message's time, ns since the Unix epoch; 0 when malformed. */
    public long timeNs;
    /** Why it is malformed; null otherwise. */
    public String error;

    public FleetRecord() {}

    /** @return the record's partition key, {@code topic/partition} */
    public String partitionKey() {
        return topic + "/" + partition;
    }
}
