package io.flywheel.serve.export;

import java.nio.file.Path;
import java.util.List;

/**
 * What a LeRobot export wrote.
 *
 * @param out the dataset folder
 * @param tag the training set's tag
 * @param fps frames per second (info.json {@code fps})
 * @param episodes episodes written (the set's episodes less {@code leftOut})
 * @param frames frames written (= the set's sample count)
 * @param tasks distinct tasks
 * @param cameras the video features, in the frames' camera order
 * @param encoder the FFmpeg encoder used, e.g. {@code libopenh264}
 * @param dataFiles data Parquet files written
 * @param videoFiles MP4 files written (all cameras)
 * @param bytes total bytes of the folder
 * @param filledImages camera images repeated from the camera's previous frame where alignment left a frame
 *     without that camera (each video keeps one frame per sample)
 * @param seconds wall time
 * @param filledVectors states and actions held from a neighbouring sample of the episode where alignment left a
 *     sample without one
 * @param leftOut ids of the set's episodes not exported: their state/action shape is not the most common one (a
 *     LeRobot dataset has one shape), none of their first samples has both a state and an action, or their cameras
 *     are not the most common set of cameras (without --missing-camera fill)
 * @param filledSlots with --resample: rows holding the previous sample again, in the slots of dropped frames
 * @param mergedSamples with --resample: samples not exported because an earlier sample took their slot
 * @param blackImages with --missing-camera fill: black frames written for a camera an episode has no image of
 */
public record LeRobotExportResult(Path out, String tag, int fps, long episodes, long frames, int tasks, List<Camera> cameras,
                                  String encoder, int dataFiles, int videoFiles,
                                  long bytes, double seconds, long filledImages, long filledVectors, List<String> leftOut,
                                  long filledSlots, long mergedSamples, long blackImages) {
    public LeRobotExportResult {
        cameras = List.copyOf(cameras);
        leftOut = List.copyOf(leftOut);
    }

    /**
     * One camera's video feature.
     *
     * @param key feature key, e.g. {@code observation.images.camera0}
     * @param topic the source topic, e.g. {@code /camera0/image/compressed}
     * @param width video frame width in pixels (after padding)
     * @param height video frame height in pixels (after padding)
     * @param padded true when the source images had an odd width or height and got one more
     *     column / row repeating the last one (H.264 4:2:0 needs even sizes)
     */
    public record Camera(String key, String topic, int width, int height, boolean padded) {
    }
}
