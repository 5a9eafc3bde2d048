package io.flywheel.stream.sink;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.flywheel.lake.Lake;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.StreamLabelLinks;
import io.flywheel.lake.StreamTables;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.label.Label;

/**
 * Writes label batches into a lake exactly once. Each {@link #commit} is one lake transaction holding the batch's
 * {@code label_history} rows and the Kafka positions the batch covers (the lake property
 * {@link StreamTables#offsetsProperty}, set compare-and-set: a second writer of the same consumer group that
 * committed meanwhile makes this commit fail with a conflict, never overwrite). A labeller that restarts reads
 * {@link #committedOffsets()} and resumes there; an episode already labelled by the group is never labelled again.
 * Not thread-safe: one sink per labeller.
 */
public final class LakeLabelSink {
    private final Lake lake;
    private final String group;
    private final Set<String> labelled = new HashSet<>();

    /**
     * @param lake the lake
     * @param consumerGroup the labeller's consumer group: whose offsets and history this sink keeps
     */
    public LakeLabelSink(Lake lake, String consumerGroup) {
        this.lake = lake;
        this.group = consumerGroup;
        for (LabelHistoryRow r : history(lake)) {
            if (r.consumerGroup().equals(consumerGroup)) {
                labelled.add(r.episodeId());
            }
        }
    }

    /** @return every row of {@code label_history}, in table order; empty when the table does not exist yet */
    public static List<LabelHistoryRow> history(Lake lake) {
        lake.refresh();
        if (!lake.hasTable(StreamTables.LABEL_HISTORY)) {
            return List.of();
        }
        return lake.table(StreamTables.LABEL_HISTORY).rows(StreamTables.LABEL_HISTORY_TABLE, ScanRequest.all());
    }

    /** @return the positions this group's committed labels cover; none before its first commit */
    public PartitionOffsets committedOffsets() {
        lake.refresh();
        String key = StreamTables.offsetsProperty(group);
        return PartitionOffsets.parse(lake.snapshot().properties().get(key), "lake property " + key);
    }

    /**
     * @return the highest positions read before this group's last commit (records below them were seen by an earlier
     *     run: of a labelled episode, a replay rather than a late event); none before its first commit
     */
    public PartitionOffsets committedSeen() {
        lake.refresh();
        String key = StreamTables.seenProperty(group);
        return PartitionOffsets.parse(lake.snapshot().properties().get(key), "lake property " + key);
    }

    /** @return the episodes this group has committed a label for (a view) */
    public Set<String> labelled() {
        return java.util.Collections.unmodifiableSet(labelled);
    }

    /**
     * @return the last checkpoint whose batch this group committed, {@code RUN:ID}, or null when none was (or the group
     *     commits without checkpoints)
     */
    public String committedCheckpoint() {
        lake.refresh();
        return lake.snapshot().properties().get(StreamTables.checkpointProperty(group));
    }

    /**
     * @param run the job run the checkpoint belongs to (its checkpoint ids count from 1)
     * @param checkpointId the checkpoint
     * @return whether this group committed that checkpoint of that run, or a later one of it, already
     */
    public boolean isCommitted(String run, long checkpointId) {
        String last = committedCheckpoint();
        if (last == null) {
            return false;
        }
        int colon = last.lastIndexOf(':');
        try {
            return colon > 0 && last.substring(0, colon).equals(run)
                    && Long.parseLong(last.substring(colon + 1)) >= checkpointId;
        } catch (NumberFormatException e) {
            throw new io.flywheel.error.BadInputException("lake property " + StreamTables.checkpointProperty(group)
                    + ": bad checkpoint '" + last + "': expected RUN:ID");
        }
    }

    /** @return whether the group has committed a label for the episode */
    public boolean isLabelled(String episodeId) {
        return labelled.contains(episodeId);
    }

    /**
     * Commits labels and the positions they cover in one lake transaction. Labels of episodes this group already
     * labelled are dropped (a replay after a restart); an empty batch still moves the offsets.
     *
     * @param labels the labels, one per episode
     * @param covered the positions to resume from after this batch (merged over the committed ones)
     * @param seen the highest positions read so far (merged over the committed ones)
     * @param checkpointId the checkpoint the batch belongs to, -1 without checkpoints
     * @return the labels written
     * @throws io.flywheel.lake.CommitConflictException when another writer moved this group's offsets meanwhile
     */
    public List<Label> commit(List<Label> labels, PartitionOffsets covered, PartitionOffsets seen, long checkpointId) {
        return commit(labels, covered, seen, checkpointId, null);
    }

    /**
     * {@link #commit(List, PartitionOffsets, PartitionOffsets, long)} of one checkpoint's batch: the same transaction
     * also records {@code run:checkpointId} (lake property {@link StreamTables#checkpointProperty}), so that the batch
     * of a checkpoint committed already is recognised ({@link #isCommitted}) and not committed again.
     *
     * @param run the job run the checkpoint belongs to, or null to record none
     */
    public List<Label> commit(List<Label> labels, PartitionOffsets covered, PartitionOffsets seen, long checkpointId,
            String run) {
        PartitionOffsets next = committedOffsets().with(covered);
        PartitionOffsets high = committedSeen().with(seen);
        long now = System.currentTimeMillis() * 1_000_000L;
        List<LabelHistoryRow> rows = new ArrayList<>();
        List<Label> written = new ArrayList<>();
        Set<String> batch = new HashSet<>();
        for (Label l : labels) {
            if (!labelled.contains(l.episodeId()) && batch.add(l.episodeId())) {
                rows.add(new LabelHistoryRow(l.episodeId(), l.robotId(), l.outcome().label(), l.rule(), l.rulesVersion(),
                        next.text(), checkpointId, group, now));
                written.add(l);
            }
        }
        var txn = lake.begin("stream-label")
                .propertyIfUnchanged(StreamTables.offsetsProperty(group), next.text())
                .property(StreamTables.seenProperty(group), high.text())
                .summary("labels", Integer.toString(rows.size()))
                .summary("offsets", next.text());
        if (run != null) {
            txn.property(StreamTables.checkpointProperty(group), run + ":" + checkpointId)
                    .summary("checkpoint", run + ":" + checkpointId);
        }
        if (!rows.isEmpty()) {
            txn.append(StreamTables.LABEL_HISTORY_TABLE, rows, batch);
        }
        txn.commit();
        labelled.addAll(batch);
        if (!rows.isEmpty()) {
            // the episodes' stream_* columns follow label_history (a projection: a crash here is caught up by the next
            // apply, after the next batch or the next ingest)
            StreamLabelLinks.apply(lake);
        }
        return written;
    }
}
