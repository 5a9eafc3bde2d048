package io.flywheel.stream.flink;

import java.time.Duration;
import java.util.Objects;

import io.flywheel.stream.rules.LabelRules;

/**
 * Options of the {@link LabellingJob}; immutable, built with {@link #builder(String, String)}. Defaults: consumer
 * group {@code flywheel-labeller}, {@link LabelRules#defaults()}, checkpoints every 1 s, 2 s out-of-orderness bound,
 * 1 s idleness (after which the watermark advances
 * with the wall clock), parallelism 1, unbounded.
 *
 * @param lake the lake's URI (local folder or {@code s3://...}): labels, positions and checkpoint marks go there
 * @param bootstrap Kafka bootstrap servers, {@code HOST:PORT[,...]}
 * @param group the consumer group: whose positions and label history the lake keeps
 * @param rules the labelling rules; their allowed lateness closes each episode's window
 * @param checkpointInterval how often Flink checkpoints, i.e. how often a label batch can reach the lake
 * @param outOfOrderness how far behind the newest event time the watermark stays
 * @param idleness with no record for this long, a partition's watermark advances with the wall clock. It must exceed
 *     the longest outage to ride through (a Kafka broker restart, a network cut between the fleet and Kafka): to the
 *     watermark an outage looks like a quiet fleet, and once the idleness has passed it moves on by the outage's length
 *     and closes the windows of episodes whose records are still held by the producers (those records then come late
 *     and are dead-lettered; the labels miss them). A single broker restarting took 10-20 s on 2 cores. The price: the
 *     last episodes before a real pause of the fleet close only after the idleness.
 * @param parallelism the episode windows' parallelism (the source's is at most this; the lake committer's is 1)
 * @param bounded read up to the end offsets found at start, label everything, commit and finish (a catch-up run);
 *     otherwise run until cancelled
 * @param checkpointDir where checkpoints go (a folder URI: {@code file:///...}, {@code s3://...}), or null for the
 *     environment's setting (Flink's default keeps them in the job manager's memory, at most 5 MB of state: too
 *     little for a backlog of open episodes)
 */
public record LabellingJobOptions(String lake, String bootstrap, String group, LabelRules rules,
        Duration checkpointInterval, Duration outOfOrderness, Duration idleness, int parallelism, boolean bounded,
        String checkpointDir) implements java.io.Serializable {
    /** @throws IllegalArgumentException when a duration or the parallelism is out of range */
    public LabellingJobOptions {
        Objects.requireNonNull(lake, "lake");
        Objects.requireNonNull(bootstrap, "bootstrap");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(rules, "rules");
        if (checkpointInterval.toMillis() < 10) {
            throw new IllegalArgumentException("checkpoint interval must be >= 10 ms, got " + checkpointInterval.toMillis() + " ms");
        }
        if (outOfOrderness.isNegative() || idleness.isNegative()) {
            throw new IllegalArgumentException("out-of-orderness and idleness must be >= 0");
        }
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism must be >= 1, got " + parallelism);
        }
    }

    /**
     * @param lake the lake's URI
     * @param bootstrap Kafka bootstrap servers
     */
    public static Builder builder(String lake, String bootstrap) {
        return new Builder(lake, bootstrap);
    }

    /** Builder of {@link LabellingJobOptions}. */
    public static final class Builder {
        private final String lake;
        private final String bootstrap;
        private String group = "flywheel-labeller";
        private LabelRules rules = LabelRules.defaults();
        private Duration checkpointInterval = Duration.ofSeconds(1);
        private Duration outOfOrderness = Duration.ofSeconds(2);
        private Duration idleness = Duration.ofSeconds(1);
        private int parallelism = 1;
        private boolean bounded;
        private String checkpointDir;

        private Builder(String lake, String bootstrap) {
            this.lake = lake;
            this.bootstrap = bootstrap;
        }

        public Builder group(String g) { group = g; return this; }
        public Builder rules(LabelRules r) { rules = r; return this; }
        public Builder checkpointInterval(Duration d) { checkpointInterval = d; return this; }
        public Builder outOfOrderness(Duration d) { outOfOrderness = d; return this; }
        public Builder idleness(Duration d) { idleness = d; return this; }
        public Builder parallelism(int p) { parallelism = p; return this; }
        public Builder bounded(boolean b) { bounded = b; return this; }
        public Builder checkpointDir(String uri) { checkpointDir = uri; return this; }

        public LabellingJobOptions build() {
            return new LabellingJobOptions(lake, bootstrap, group, rules, checkpointInterval, outOfOrderness, idleness,
                    parallelism, bounded, checkpointDir);
        }
    }
}
