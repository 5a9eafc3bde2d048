package io.flywheel.stream.flink;

import java.util.Set;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.stream.label.EpisodeEvidence;
import io.flywheel.stream.label.EpisodeLabeller;
import io.flywheel.stream.label.Label;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.sink.PartitionOffsets;

/**
 * The episode windows of the labelling job, keyed by episode id: each episode's records are kept (as received) until
 * the watermark passes its end event plus the rules' allowed lateness; then the episode is labelled by
 * {@link EpisodeLabeller} and the window is closed for good. An episode whose start event has not come when the
 * watermark passes its newest record plus the allowed lateness is unknown: its records go to the dead-letter output.
 * A record of a closed episode is late (dead-lettered); a malformed record is dead-lettered at once (the key of
 * malformed records is the empty string).
 *
 * <p>After a restart from the lake's positions the job reads again the records of the episodes that were open at the
 * last commit, together with records of episodes labelled already: a record below the highest position read before
 * that commit ({@link LakeLabelSink#committedSeen()}) of an episode the lake has a label for, or malformed, is a
 * replay (counted, not dead-lettered); above it, it is late.
 *
 * <p>A closed episode's state is one flag, kept for {@link #CLOSED_RETENTION_MS} of event time after it closed (then
 * dropped: a record of it after that is taken for one of an unknown episode, still dead-lettered).
 *
 * <p>Emits a {@link Progress} per record (its position, and the episode it keeps open) and per closed window.
 * Accumulators: {@code records}, {@code replayed}, {@code malformed}, {@code late}, {@code unknown_episode},
 * {@code open_episodes}.
 */
final class EpisodeWindows extends KeyedProcessFunction<String, FleetRecord, Progress> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(EpisodeWindows.class);
    /** Where dead letters go. */
    static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters", TypeInformation.of(DeadLetter.class));

    /** How long (event time, ms) a closed episode is remembered, to tell its late records. */
    static final long CLOSED_RETENTION_MS = 3_600_000L;

    private final String lakeUri;
    private final String group;
    private final LabelRules rules;

    private transient Set<String> labelledBefore;
    private transient PartitionOffsets seenBefore;
    private transient ListState<FleetRecord> records;
    /** When the window closed (its close time, event ms); null while open. */
    private transient ValueState<Long> closed;
    private transient ValueState<Long> startNs;
    private transient ValueState<Long> endNs;
    private transient ValueState<Long> lastNs;
    private transient LongCounter read;
    private transient LongCounter replayed;
    private transient LongCounter malformed;
    private transient LongCounter late;
    private transient LongCounter unknown;
    private transient LongCounter open;

    EpisodeWindows(String lakeUri, String group, LabelRules rules) {
        this.lakeUri = lakeUri;
        this.group = group;
        this.rules = rules;
    }

    @Override
    public void open(OpenContext ctx) {
        try (Lake lake = Lake.open(lakeUri)) {
            LakeLabelSink sink = new LakeLabelSink(lake, group);
            labelledBefore = Set.copyOf(sink.labelled());
            seenBefore = sink.committedSeen();
        }
        records = getRuntimeContext().getListState(new ListStateDescriptor<>("records", TypeInformation.of(FleetRecord.class)));
        closed = getRuntimeContext().getState(new ValueStateDescriptor<>("closed-at-ms", Types.LONG));
        startNs = getRuntimeContext().getState(new ValueStateDescriptor<>("start-ns", Types.LONG));
        endNs = getRuntimeContext().getState(new ValueStateDescriptor<>("end-ns", Types.LONG));
        lastNs = getRuntimeContext().getState(new ValueStateDescriptor<>("last-ns", Types.LONG));
        read = counter("records");
        replayed = counter("replayed");
        malformed = counter("malformed");
        late = counter("late");
        unknown = counter("unknown_episode");
        open = counter("open_episodes");
    }

    private LongCounter counter(String name) {
        LongCounter c = new LongCounter();
        getRuntimeContext().addAccumulator(name, c);
        return c;
    }

    @Override
    public void processElement(FleetRecord r, Context ctx, Collector<Progress> out) throws Exception {
        read.add(1);
        String part = r.partitionKey();
        boolean replay = seenBefore.of(r.topic, r.partition) > r.offset;
        if (r.kind == FleetRecord.MALFORMED) {
            if (replay) {
                replayed.add(1);
            } else {
                malformed.add(1);
                deadLetter(ctx, r, DeadLetter.MALFORMED, r.error);
            }
            out.collect(Progress.seen(part, r.offset, null));
            return;
        }
        if (r.episodeId.isEmpty()) { // an alert outside any episode labels nothing
            out.collect(Progress.seen(part, r.offset, null));
            return;
        }
        boolean closedHere = closed.value() != null;
        if (closedHere || labelledBefore.contains(r.episodeId)) {
            if (!closedHere && replay) {
                replayed.add(1);
            } else {
                late.add(1);
                deadLetter(ctx, r, DeadLetter.LATE, "episode " + r.episodeId + " is labelled already");
            }
            out.collect(Progress.seen(part, r.offset, null));
            return;
        }
        if (!records.get().iterator().hasNext()) {
            open.add(1);
        }
        records.add(r);
        if (r.kind == FleetRecord.STARTED) {
            startNs.update(r.timeNs);
        } else if (r.kind == FleetRecord.ENDED) {
            endNs.update(r.timeNs);
        }
        Long last = lastNs.value();
        if (last == null || r.timeNs > last) {
            lastNs.update(r.timeNs);
        }
        out.collect(Progress.seen(part, r.offset, r.episodeId));
        if (startNs.value() != null && endNs.value() != null) {
            ctx.timerService().registerEventTimeTimer(closeAtMs(endNs.value()));
        } else if (startNs.value() == null) {
            ctx.timerService().registerEventTimeTimer(closeAtMs(lastNs.value()));
        }
    }

    /** @return the event time (ms) at which a window that ends at {@code ns} closes: ns + allowed lateness, rounded up */
    private long closeAtMs(long ns) {
        long t = ns + rules.allowedLateness().toNanos();
        return Math.floorDiv(t + 999_999L, 1_000_000L);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Progress> out) throws Exception {
        Long closedAt = closed.value();
        if (closedAt != null) {
            if (timestamp >= closedAt + CLOSED_RETENTION_MS) {
                closed.clear();
            }
            return;
        }
        long wm = ctx.timerService().currentWatermark();
        Long start = startNs.value();
        Long end = endNs.value();
        String episode = ctx.getCurrentKey();
        if (start != null && end != null && wm >= closeAtMs(end)) {
            Label label = EpisodeLabeller.label(rules, evidence(episode));
            closeWindow(ctx, timestamp);
            out.collect(Progress.closed(episode, label));
        } else if (start == null && lastNs.value() != null && wm >= closeAtMs(lastNs.value())) {
            for (FleetRecord r : records.get()) {
                unknown.add(1);
                deadLetter(ctx, r, DeadLetter.UNKNOWN_EPISODE, "no start event for episode " + episode);
            }
            closeWindow(ctx, timestamp);
            out.collect(Progress.closed(episode, null));
        }
    }

    private void closeWindow(OnTimerContext ctx, long atMs) throws java.io.IOException {
        records.clear();
        startNs.clear();
        endNs.clear();
        lastNs.clear();
        closed.update(atMs);
        ctx.timerService().registerEventTimeTimer(atMs + CLOSED_RETENTION_MS);
        open.add(-1);
    }

    private EpisodeEvidence evidence(String episode) throws Exception {
        EpisodeEvidence e = null;
        for (FleetRecord r : records.get()) {
            if (e == null) {
                e = new EpisodeEvidence(r.robotId, episode);
            }
            switch (r.kind) {
                case FleetRecord.STARTED -> e.started(r.timeNs);
                case FleetRecord.ENDED -> e.ended(r.timeNs);
                case FleetRecord.OBSERVATION -> e.add(ObservationSummary.parseFrom(r.value));
                case FleetRecord.ALERT -> e.add(Alert.parseFrom(r.value));
                default -> { }
            }
        }
        return e;
    }

    private static void deadLetter(Context ctx, FleetRecord r, String reason, String detail) {
        DeadLetter d = DeadLetter.of(r, reason, detail);
        LOG.warn(d.describe());
        ctx.output(DEAD_LETTERS, d);
    }
}
