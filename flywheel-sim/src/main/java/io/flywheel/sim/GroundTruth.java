package io.flywheel.sim;

import java.util.List;
import java.util.Map;

/**
 * The truth about a simulated fleet, written as {@code ground_truth.json} (snake_case field
 * names). Times are int64 ns since the Unix epoch on the true (master) clock, which is the arm
 * controller's clock; durations and offsets are ns.
 *
 * @param format always "flywheel-sim-ground-truth"
 * @param version format version, 1
 * @param fleet the parameters the fleet was generated with
 * @param robots per robot: scene, operators, device clock offsets, unsynced camera
 * @param duplicateGroups near-duplicate groups: group id and its episode ids
 * @param episodes per episode, in index order
 */
public record GroundTruth(String format, int version, Fleet fleet, List<FleetPlan.Robot> robots,
                          List<DuplicateGroup> duplicateGroups, List<Episode> episodes) {

    /**
     * Fleet parameters.
     *
     * @param transparentEpisodes episodes with a transparent object
     * @param reflectiveEpisodes episodes with a reflective (not transparent) object
     * @param failures failed episodes
     * @param glassCupFailures failed episodes whose object is the glass cup
     */
    public record Fleet(String preset, long seed, int episodes, int robots, double episodeSeconds,
                        int width, int height, int jpegQuality, String jpegEncoder, double cameraHz,
                        double jointStateHz, double commandHz, double messageDropRate,
                        double frameDropRate, double duplicateRate, int hardObjectEpisodes,
                        int transparentEpisodes, int reflectiveEpisodes, int failures,
                        int glassCupFailures) {}

    /** One near-duplicate group: the same operator repeating the same demonstration. */
    public record DuplicateGroup(int group, List<String> episodes) {}

    /** A named interval [startNs, endNs). */
    public record Interval(String name, long startNs, long endNs) {}

    /**
     * One periodic message stream of one device.
     *
     * <p>True capture (sample) time of message k: {@code nominalStartNs + k * periodNs +
     * deviationNs[k]} (deviation 0 when the array is empty). Header stamp: true time + {@code
     * clockOffsetNs} + a jitter within +-{@code stampJitterMaxNs}. Log time (receive time on the
     * recorder's clock, equal to true time): true time + a transport latency in [latencyMinNs,
     * latencyMaxNs]. MCAP sequence = k. Messages whose k is in {@code dropped} are missing.
     *
     * @param topic the topic
     * @param device the device whose clock stamps it
     * @param clockOffsetNs device clock minus true time
     * @param stampJitterMaxNs bound of the header-stamp jitter
     * @param latencyMinNs smallest transport latency
     * @param latencyMaxNs largest transport latency
     * @param nominalStartNs true time of message 0 without deviation
     * @param periodNs nominal period
     * @param count number of messages the device produced (including dropped ones)
     * @param deviationNs per message, the true time minus the nominal time (cameras: exposure
     *     timing jitter); empty when all are 0
     * @param dropped indices k of the messages that were lost, ascending
     */
    public record Stream(String topic, String device, long clockOffsetNs, long stampJitterMaxNs,
                         long latencyMinNs, long latencyMaxNs, long nominalStartNs, long periodNs,
                         int count, int[] deviationNs, int[] dropped) {

        /** @return the true capture time of message k, ns */
        public long trueTimeNs(int k) {
            return nominalStartNs + k * periodNs + (deviationNs.length == 0 ? 0 : deviationNs[k]);
        }
    }

    /**
     * One episode.
     *
     * @param file path relative to the fleet folder
     * @param transparent the object is transparent (glass)
     * @param reflective the object is reflective
     * @param failureCause null on success
     * @param duplicateGroup -1 when not a near-duplicate
     * @param phases approach, grasp, lift, place, retreat in true time
     * @param blurryIntervals camera frames captured inside are motion-blurred (all cameras)
     * @param staticIntervals the robot stands still (frames static up to noise)
     * @param cameras by camera name: head_camera, left_wrist_camera, right_wrist_camera
     * @param jointStates /joint_states at 200 Hz
     * @param commands /teleop/command at 50 Hz (no header: clock offset and stamp jitter 0, only log times)
     * @param messages messages written to the file
     * @param bytes file size in bytes
     */
    public record Episode(String episodeId, String file, String robotId, String scene, String lighting,
                          String operator, String object, boolean transparent, boolean reflective,
                          String task, String outcome, String failureCause, long startTimeNs,
                          long durationNs, int duplicateGroup, List<Interval> phases,
                          List<Interval> blurryIntervals, List<Interval> staticIntervals,
                          Map<String, Stream> cameras, Stream jointStates, Stream commands,
                          long messages, long bytes) {

        /** @return this episode with its file size set ({@link EpisodeGenerator#generate} leaves it 0) */
        public Episode withBytes(long fileBytes) {
            return new Episode(episodeId, file, robotId, scene, lighting, operator, object, transparent, reflective,
                    task, outcome, failureCause, startTimeNs, durationNs, duplicateGroup, phases, blurryIntervals,
                    staticIntervals, cameras, jointStates, commands, messages, fileBytes);
        }
    }
}
