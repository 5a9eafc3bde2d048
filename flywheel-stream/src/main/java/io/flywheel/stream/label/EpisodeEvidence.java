package io.flywheel.stream.label;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.ObservationSummary;

/**
 * What the stream has seen of one episode so far, in any arrival order: its start and end times, its observation
 * summaries and alerts. Mutable (the labelling job's keyed state); {@link EpisodeLabeller} reads it in event-time
 * order whatever the arrival order was.
 *
 * <p>Idempotent per event: a summary is identified by its {@code time_ns} (the start of the second it covers) and an
 * alert by its kind and {@code time_ns}; a second copy of one (an MQTT QoS 1 redelivery relayed to Kafka again, a
 * producer retry that was not idempotent) is ignored, so that it neither doubles the interventions nor repeats
 * samples. The episode events are idempotent by nature (a start or end time set again to the same value).
 */
public final class EpisodeEvidence implements Serializable {
    private static final long serialVersionUID = 1L;

    /** One gripper sample: time ns since the Unix epoch, opening as a fraction of range, force in newtons. */
    public record GripSample(long timeNs, float opening, float forceN) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** One alert: its kind and time ns since the Unix epoch. */
    public record AlertMark(Alert.Kind kind, long timeNs) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    private final String robotId;
    private final String episodeId;
    private long startNs = Long.MIN_VALUE;
    private long endNs = Long.MIN_VALUE;
    private long samplePeriodNs;
    private final List<GripSample> samples = new ArrayList<>();
    private final List<AlertMark> alerts = new ArrayList<>();
    private final List<Long> successSignalsNs = new ArrayList<>();
    private long interventions;
    private final java.util.Set<Long> summaryTimes = new java.util.HashSet<>();
    private final java.util.Set<AlertMark> alertSeen = new java.util.HashSet<>();

    /**
     * @param robotId the robot
     * @param episodeId the episode
     */
    public EpisodeEvidence(String robotId, String episodeId) {
        this.robotId = robotId;
        this.episodeId = episodeId;
    }

    /** @param timeNs the episode's start, ns since the Unix epoch */
    public void started(long timeNs) {
        startNs = timeNs;
    }

    /** @param timeNs the episode's end, ns since the Unix epoch */
    public void ended(long timeNs) {
        endNs = timeNs;
    }

    /**
     * Adds one second's summary, unless a summary of the same {@code time_ns} was added already.
     *
     * @return false when it was a copy of one added already (and was ignored)
     * @throws IllegalArgumentException when the opening and force sample counts differ or the sample period is not
     *     positive while there are samples
     */
    public boolean add(ObservationSummary s) {
        if (s.getGripperOpeningCount() != s.getGripperForceNCount()) {
            throw new IllegalArgumentException("observation summary at " + s.getTimeNs() + " ns has "
                    + s.getGripperOpeningCount() + " gripper openings but " + s.getGripperForceNCount() + " forces");
        }
        if (s.getGripperOpeningCount() > 0) {
            if (s.getSamplePeriodNs() <= 0) {
                throw new IllegalArgumentException("observation summary at " + s.getTimeNs()
                        + " ns has samples but sample_period_ns " + s.getSamplePeriodNs());
            }
        }
        if (!summaryTimes.add(s.getTimeNs())) {
            return false;
        }
        if (s.getGripperOpeningCount() > 0) {
            samplePeriodNs = s.getSamplePeriodNs();
        }
        for (int i = 0; i < s.getGripperOpeningCount(); i++) {
            samples.add(new GripSample(s.getTimeNs() + i * s.getSamplePeriodNs(), s.getGripperOpening(i), s.getGripperForceN(i)));
        }
        if (s.getSuccessSignal()) {
            successSignalsNs.add(s.getTimeNs());
        }
        interventions += s.getInterventions();
        return true;
    }

    /**
     * @param a an alert raised during the episode (or claimed to be)
     * @return false when an alert of the same kind and time was added already (and this one was ignored)
     */
    public boolean add(Alert a) {
        AlertMark m = new AlertMark(a.getKind(), a.getTimeNs());
        if (!alertSeen.add(m)) {
            return false;
        }
        alerts.add(m);
        return true;
    }

    public String robotId() { return robotId; }
    public String episodeId() { return episodeId; }
    /** @return whether the start event was seen */
    public boolean hasStart() { return startNs != Long.MIN_VALUE; }
    /** @return whether the end event was seen */
    public boolean hasEnd() { return endNs != Long.MIN_VALUE; }
    /** @return the start, ns since the Unix epoch; Long.MIN_VALUE when not seen */
    public long startNs() { return startNs; }
    /** @return the end, ns since the Unix epoch; Long.MIN_VALUE when not seen */
    public long endNs() { return endNs; }
    /** @return the gripper sample spacing, ns; 0 before any sample */
    public long samplePeriodNs() { return samplePeriodNs; }
    /** @return the gripper samples in arrival order */
    public List<GripSample> samples() { return Collections.unmodifiableList(samples); }
    /** @return the alerts in arrival order */
    public List<AlertMark> alerts() { return Collections.unmodifiableList(alerts); }
    /** @return the start times, ns, of the summaries that carried the success signal */
    public List<Long> successSignalsNs() { return Collections.unmodifiableList(successSignalsNs); }
    /** @return operator interventions summed over the summaries */
    public long interventions() { return interventions; }
}
