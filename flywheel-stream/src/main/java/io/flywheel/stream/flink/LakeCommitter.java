package io.flywheel.stream.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.flywheel.lake.Lake;
import io.flywheel.stream.label.Label;
import io.flywheel.stream.rules.Outcome;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.sink.PartitionOffsets;

/**
 * The labelling job's two-phase lake sink (parallelism 1). Phase one, at each checkpoint: the labels closed since the
 * last checkpoint and the positions to resume from become one pending batch, kept in the checkpoint. Phase two, when
 * the checkpoint completes: the batch is committed by {@link LakeLabelSink} in one lake transaction with its Kafka
 * positions and {@code JOB:CHECKPOINT} (so a batch of a checkpoint committed already, as after a failover that
 * restores the checkpoint before its notice came, is not committed again). A batch with no label that would not move
 * the lake's positions is not committed.
 *
 * <p>Positions to resume from, per partition: the first offset of any episode still open (its records must be read
 * again after a restart without Flink state), else the position reached. The position reached is kept beside them.
 *
 * <p>Accumulators: {@code labels} (committed), {@code commits} (lake commits).
 */
final class LakeCommitter extends AbstractStreamOperator<Void> implements OneInputStreamOperator<Progress, Void> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(LakeCommitter.class);

    private final String lakeUri;
    private final String group;

    /** One checkpoint's batch. */
    record Batch(String run, long checkpointId, List<Label> labels, Map<String, Long> resume, Map<String, Long> seen)
            implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** Everything this operator keeps in a checkpoint. */
    private static final class Kept implements Serializable {
        private static final long serialVersionUID = 1L;
        final Map<String, Map<String, Long>> open = new HashMap<>();
        final Map<String, Long> seen = new TreeMap<>();
        final List<Label> closed = new ArrayList<>();
        final TreeMap<Long, Batch> pending = new TreeMap<>();
    }

    private transient Kept kept;
    private transient ListState<byte[]> state;
    private transient Lake lake;
    private transient LakeLabelSink sink;
    private transient String run;
    private transient LongCounter labels;
    private transient LongCounter commits;

    LakeCommitter(String lakeUri, String group) {
        this.lakeUri = lakeUri;
        this.group = group;
    }

    @Override
    public void initializeState(StateInitializationContext ctx) throws Exception {
        super.initializeState(ctx);
        state = ctx.getOperatorStateStore().getListState(
                new ListStateDescriptor<>("lake-committer", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        kept = new Kept();
        for (byte[] b : state.get()) {
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(b))) {
                kept = (Kept) in.readObject();
            }
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        run = getRuntimeContext().getJobInfo().getJobId().toString();
        labels = new LongCounter();
        commits = new LongCounter();
        getRuntimeContext().addAccumulator("labels", labels);
        getRuntimeContext().addAccumulator("commits", commits);
        lake = Lake.open(lakeUri);
        sink = new LakeLabelSink(lake, group);
        // batches of checkpoints restored from state: commit those not committed yet
        commitUpTo(Long.MAX_VALUE);
    }

    @Override
    public void processElement(StreamRecord<Progress> element) {
        Progress p = element.getValue();
        if (p.kind == Progress.SEEN) {
            kept.seen.merge(p.partition, p.offset + 1, Math::max);
            if (p.episodeId != null) {
                kept.open.computeIfAbsent(p.episodeId, k -> new HashMap<>()).merge(p.partition, p.offset, Math::min);
            }
        } else {
            kept.open.remove(p.episodeId);
            if (p.outcome != null) {
                kept.closed.add(new Label(p.robotId, p.episodeId, Outcome.parse(p.outcome), p.rule, p.rulesVersion));
            }
        }
    }

    @Override
    public void snapshotState(StateSnapshotContext ctx) throws Exception {
        super.snapshotState(ctx);
        Map<String, Long> resume = new TreeMap<>(kept.seen);
        for (Map<String, Long> first : kept.open.values()) {
            first.forEach((part, off) -> resume.merge(part, off, Math::min));
        }
        long id = ctx.getCheckpointId();
        kept.pending.put(id, new Batch(run, id, List.copyOf(kept.closed), resume, new TreeMap<>(kept.seen)));
        kept.closed.clear();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(kept);
        }
        state.update(List.of(bytes.toByteArray()));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        commitUpTo(checkpointId);
    }

    private void commitUpTo(long checkpointId) {
        while (!kept.pending.isEmpty() && kept.pending.firstKey() <= checkpointId) {
            Batch b = kept.pending.pollFirstEntry().getValue();
            PartitionOffsets resume = new PartitionOffsets(b.resume());
            if (sink.isCommitted(b.run(), b.checkpointId())) {
                LOG.info("checkpoint {}:{} is in the lake already", b.run(), b.checkpointId());
                continue;
            }
            if (b.labels().isEmpty() && sink.committedOffsets().with(resume).equals(sink.committedOffsets())) {
                continue;
            }
            List<Label> written = sink.commit(b.labels(), resume, new PartitionOffsets(b.seen()), b.checkpointId(), b.run());
            labels.add(written.size());
            commits.add(1);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            if (lake != null) {
                lake.close();
            }
        } finally {
            super.close();
        }
    }

}
