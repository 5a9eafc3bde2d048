package io.flywheel.stream.job;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

import io.flywheel.stream.rules.LabelRules;

/**
 * Options of a {@link StreamLabeller}; immutable, built with {@link #builder(String)}. Defaults: consumer group
 * {@code flywheel-labeller}, {@link LabelRules#defaults()}, 1 s commit interval, 2 s out-of-orderness bound, 1 s
 * idleness (after which the watermark follows the wall clock), no log.
 *
 * @param bootstrap Kafka bootstrap servers, {@code HOST:PORT[,...]}
 * @param group the consumer group: whose offsets and label history the lake keeps
 * @param rules the labelling rules (their allowed lateness closes each episode's window)
 * @param commitInterval how often a label batch is committed to the lake with its offsets
 * @param outOfOrderness how far behind the newest event time the watermark stays
 * @param idleness with no record for this long, the watermark advances with the wall clock; as for the Flink job
 *     ({@link io.flywheel.stream.flink.LabellingJobOptions#idleness()}), it must exceed the longest outage of Kafka
 *     to ride through, or episodes close before their held records come
 * @param log receives a line per dead-lettered record (topic, partition, offset, reason)
 */
public record LabellerOptions(String bootstrap, String group, LabelRules rules, Duration commitInterval,
        Duration outOfOrderness, Duration idleness, Consumer<String> log) {
    /** @throws IllegalArgumentException when a duration is negative or zero where it must not be */
    public LabellerOptions {
        Objects.requireNonNull(bootstrap, "bootstrap");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(rules, "rules");
        Objects.requireNonNull(log, "log");
        if (commitInterval.isNegative() || commitInterval.isZero()) {
            throw new IllegalArgumentException("commit interval must be > 0, got " + commitInterval);
        }
        if (outOfOrderness.isNegative() || idleness.isNegative()) {
            throw new IllegalArgumentException("durations must be >= 0");
        }
    }

    /** @param bootstrap Kafka bootstrap servers */
    public static Builder builder(String bootstrap) {
        return new Builder(bootstrap);
    }

    /** Builder of {@link LabellerOptions}. */
    public static final class Builder {
        private final String bootstrap;
        private String group = "flywheel-labeller";
        private LabelRules rules = LabelRules.defaults();
        private Duration commitInterval = Duration.ofSeconds(1);
        private Duration outOfOrderness = Duration.ofSeconds(2);
        private Duration idleness = Duration.ofSeconds(1);
        private Consumer<String> log = line -> { };

        private Builder(String bootstrap) {
            this.bootstrap = bootstrap;
        }

        public Builder group(String g) { group = g; return this; }
        public Builder rules(LabelRules r) { rules = r; return this; }
        public Builder commitInterval(Duration d) { commitInterval = d; return this; }
        public Builder outOfOrderness(Duration d) { outOfOrderness = d; return this; }
        public Builder idleness(Duration d) { idleness = d; return this; }
        public Builder log(Consumer<String> l) { log = l; return this; }

        public LabellerOptions build() {
            return new LabellerOptions(bootstrap, group, rules, commitInterval, outOfOrderness, idleness, log);
        }
    }
}
