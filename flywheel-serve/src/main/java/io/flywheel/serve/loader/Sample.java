package io.flywheel.serve.loader;

import java.util.List;

/**
 * One training sample: a frame of a training set with its aligned values and camera images.
 *
 * @param sampleIndex 0-based index in the set
 * @param episodeIndex 0-based index of its episode in the set
 * @param episodeId episode id
 * @param frameIndex frame position in the episode
 * @param timestampNs master-clock time, ns since the Unix epoch
 * @param state aligned state vector (units per robot profile), empty when unmatched
 * @param action aligned action vector, empty when unmatched
 * @param gripper aligned gripper value, NaN when unmatched
 * @param images one per camera, in the frame's camera order; empty when the loader reads no images
 */
public record Sample(long sampleIndex, int episodeIndex, String episodeId, int frameIndex, long timestampNs,
                     double[] state, double[] action, double gripper, List<CameraImage> images) {
    public Sample {
        images = List.copyOf(images);
    }
}
