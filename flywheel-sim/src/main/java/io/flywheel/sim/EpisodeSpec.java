package io.flywheel.sim;

import java.util.Map;

/**
 * What the fleet plan decided about one episode before it is generated. Everything else (jitter,
 * drops, blurry and static stretches, pixels) is drawn while generating, from
 * {@link #noiseSeed()}; the demonstration itself (object and bin placement, waypoints, phase
 * timing) from {@link #demoSeed()}, which near-duplicate episodes share.
 *
 * @param index episode index in the fleet, 0-based
 * @param episodeId e.g. "ep_00017"
 * @param robotId e.g. "robot_03"
 * @param scene the robot's scene
 * @param lighting lighting during this episode
 * @param operator teleoperator id
 * @param object the object to pick
 * @param task the task string
 * @param outcome "success" or "failure"
 * @param failureCause null on success; "gripper_closed_on_nothing" (transparent object missed) or "object_slipped"
 * @param startNs episode start, ns since the Unix epoch (true time = the robot controller's clock)
 * @param durationNs episode duration in ns
 * @param duplicateGroup near-duplicate group id, or -1 when the episode is not a near-duplicate
 * @param demoSeed seed of the demonstration (equal within a duplicate group)
 * @param noiseSeed seed of everything else in the episode (derived from the fleet seed and the index)
 * @param clockOffsetsNs per device (head_camera, left_wrist_camera, right_wrist_camera, arm_controller): its clock minus true time in ns, before the per-episode drift
 */
public record EpisodeSpec(int index, String episodeId, String robotId, Catalog.Scene scene,
                          Catalog.Lighting lighting, String operator, Catalog.ObjectKind object,
                          String task, String outcome, String failureCause, long startNs,
                          long durationNs, int duplicateGroup, long demoSeed, long noiseSeed,
                          Map<String, Long> clockOffsetsNs) {

    /** @return true when the episode failed */
    public boolean failed() {
        return failureCause != null;
    }

    /** @return the file path relative to the output folder: {@code <robot_id>/<episode_id>.mcap} */
    public String file() {
        return robotId + "/" + episodeId + ".mcap";
    }
}
