package io.flywheel.fleet.client;

import java.util.Objects;

import io.flywheel.fleet.v1.FileKind;

/**
 * What to upload a file as (the fields of {@code Begin} besides the file's own name, size and hash).
 *
 * @param robotId the robot (the token's)
 * @param episodeId the robot's own name of the episode, "" for none
 * @param kind MCAP, ROS1_BAG or SIDECAR_MP4
 * @param recordingSha256 for a sidecar: its recording's SHA-256 (lower-case hex); else ""
 * @param camera for a sidecar: its camera name, "" to take it from the file name {@code NAME.<camera>.mp4}; else ""
 */
public record UploadSpec(String robotId, String episodeId, FileKind kind, String recordingSha256, String camera) {
    public UploadSpec {
        Objects.requireNonNull(robotId, "robotId");
        Objects.requireNonNull(kind, "kind");
        episodeId = episodeId == null ? "" : episodeId;
        recordingSha256 = recordingSha256 == null ? "" : recordingSha256;
        camera = camera == null ? "" : camera;
    }

    /** @return a recording (MCAP or ROS 1 bag) */
    public static UploadSpec of(String robotId, String episodeId, FileKind kind) {
        return new UploadSpec(robotId, episodeId, kind, "", "");
    }

    /** @return a sidecar video of the recording with SHA-256 {@code recordingSha256} */
    public static UploadSpec sidecar(String robotId, String episodeId, String recordingSha256, String camera) {
        return new UploadSpec(robotId, episodeId, FileKind.SIDECAR_MP4, recordingSha256, camera);
    }
}
