package io.flywheel.stream.flink;

/**
 * What the episode windows tell the lake committer, in stream order: a record was read ({@link #SEEN}: its partition
 * and offset, and the episode it keeps open, if any), or an episode's window closed ({@link #CLOSED}: with its label,
 * or without one when it was an unknown episode). From these the committer knows, at each checkpoint, the labels to
 * commit and the positions to resume from. A Flink POJO.
 */
public class Progress {
    public static final int SEEN = 0;
    public static final int CLOSED = 1;

    /** {@link #SEEN} or {@link #CLOSED}. */
    public int kind;
    /** SEEN: {@code topic/partition}. */
    public String partition;
    /** SEEN: the record's offset. */
    public long offset;
    /** SEEN: the open episode the record belongs to, or null; CLOSED: the episode. */
    public String episodeId;
    /** CLOSED with a label: robot, outcome label, rule, rules version; null for an unknown episode. */
    public String robotId;
    public String outcome;
    public String rule;
    public String rulesVersion;

    public Progress() {}

    static Progress seen(String partition, long offset, String episodeId) {
        Progress p = new Progress();
        p.kind = SEEN;
        p.partition = partition;
        p.offset = offset;
        p.episodeId = episodeId;
        return p;
    }

    static Progress closed(String episodeId, io.flywheel.stream.label.Label label) {
        Progress p = new Progress();
        p.kind = CLOSED;
        p.episodeId = episodeId;
        if (label != null) {
            p.robotId = label.robotId();
            p.outcome = label.outcome().label();
            p.rule = label.rule();
            p.rulesVersion = label.rulesVersion();
        }
        return p;
    }
}
