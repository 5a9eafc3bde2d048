package io.flywheel.fleet.sim;

import java.nio.file.Path;
import java.util.List;

/**
 * How a {@link LiveFleet} run went: what the robots recorded, uploaded and published, and the faults injected. The
 * {@link #episodes} and {@link #messages} lists are the run's ground truth for a check against the lake
 * ({@link LiveCheck}).
 *
 * @param robots robots
 * @param episodesRecorded episodes recorded (MCAP files written)
 * @param uploaded files the gateway landed in this run
 * @param alreadyInLake files the gateway had already (answered at BEGIN, not sent)
 * @param ingested files the gateway reported ingested (when the robots waited for it)
 * @param ingestFailed files the gateway could not ingest
 * @param bytes bytes of the recordings
 * @param bytesSent chunk bytes sent, retries included
 * @param uploadCuts gRPC connections cut mid-upload (faults that happened, not just drawn)
 * @param uploadsResumed uploads that took more than one stream and continued from a staged offset
 * @param published messages published per QoS class, index 0, 1, 2 (duplicates injected included)
 * @param duplicatesInjected QoS 1 messages published a second time with the same message id
 * @param mqttCuts MQTT connections cut
 * @param reconnects MQTT reconnections after a cut (the client's own, on its persistent session)
 * @param inFlightAtCuts QoS 1 and 2 messages not yet acknowledged by the broker when their connection was cut
 * @param unacknowledged QoS 1 and 2 messages the broker had not acknowledged 30 s after the robot's last episode (a
 *     failure)
 * @param recordedSeconds robot time recorded: the episodes' durations, all robots
 * @param timelineSeconds robot time of the longest robot's day: its first episode's start to its last one's end
 *     (the robots live their days side by side)
 * @param recordingWallSeconds wall time until the last robot finished recording
 * @param wallSeconds wall time of the run, the wait for the last uploads and their ingest included
 * @param episodeList each episode, in fleet order
 * @param messages each QoS 1 and 2 message (once, also when duplicated), in publishing order per robot
 * @param failures what went wrong: a refused upload, an ingest failure, an unacknowledged message; empty when
 *     nothing did
 * @param groundTruth the simulator's {@code ground_truth.json} of the recordings
 */
public record LiveFleetReport(int robots, int episodesRecorded, long uploaded, long alreadyInLake, long ingested,
        long ingestFailed, long bytes, long bytesSent, long uploadCuts, long uploadsResumed, long[] published,
        long duplicatesInjected, long mqttCuts, long reconnects, long inFlightAtCuts, long unacknowledged,
        double recordedSeconds, double timelineSeconds, double recordingWallSeconds, double wallSeconds,
        List<Episode> episodeList, List<Message> messages,
        List<String> failures, Path groundTruth) {

    /**
     * One episode.
     *
     * @param robotId the robot
     * @param episodeId the robot's (simulator's) episode id, e.g. {@code ep_00004}
     * @param file the recording on the robot's disk
     * @param sha256 its SHA-256, lower-case hex
     * @param bytes its size
     * @param startNs its start, robot clock, ns since the Unix epoch
     * @param endNs its end, robot clock
     * @param state the gateway's last answer: LANDED, INGESTING, INGESTED, INGEST_FAILED; or REFUSED
     * @param attempts upload streams opened (more than 1 after a cut)
     * @param cut whether its connection was cut mid-upload
     * @param resumedAt where the upload continued after the cut (the offset the gateway had staged), -1 if it did not
     * @param error the refusal or ingest failure, "" when none
     */
    public record Episode(String robotId, String episodeId, Path file, String sha256, long bytes, long startNs,
            long endNs, String state, int attempts, boolean cut, long resumedAt, String error) {}

    /**
     * One QoS 1 or QoS 2 message.
     *
     * @param robotId the robot
     * @param messageId its id ({@code <robot>-<day>-<counter>}), unique per robot, the same when the same fleet runs
     *     again
     * @param qos 1 or 2
     * @param topic the topic, {@code fleet/<robot>/alert|audit/<kind>}
     * @param tsNs its time, robot clock
     * @param episodeId the episode being recorded then (the simulator's id)
     * @param duplicated whether it was published twice (fault)
     */
    public record Message(String robotId, String messageId, int qos, String topic, long tsNs, String episodeId,
            boolean duplicated) {}

    /** @return whether nothing went wrong */
    public boolean ok() {
        return failures.isEmpty();
    }

    /** @return messages published, all QoS classes */
    public long publishedTotal() {
        return published[0] + published[1] + published[2];
    }

    /** @return robot seconds per wall second achieved while recording: what {@code --speed} asked for, or less */
    public double speedAchieved() {
        return recordingWallSeconds > 0 ? timelineSeconds / recordingWallSeconds : 0;
    }
}
