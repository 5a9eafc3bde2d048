package io.flywheel.fleet.upload;

import io.flywheel.fleet.v1.FileKind;

/**
 * One upload the gateway knows of and has not finished with: what its state file
 * {@code _staging/uploads/<robot>/<upload-id>.json} holds.
 *
 * @param uploadId {@link UploadIds#uploadId}
 * @param robotId the robot that uploads it
 * @param sha256 the file's SHA-256 as declared at BEGIN, lower-case hex
 * @param sizeBytes the file's size in bytes as declared at BEGIN, &gt; 0
 * @param kind {@code MCAP}, {@code ROS1_BAG} or {@code SIDECAR_MP4}
 * @param fileName the file's name on the robot
 * @param episodeId the robot's own name of the episode, "" for none
 * @param recordingSha256 a sidecar's recording, lower-case hex; "" for other kinds
 * @param camera a sidecar's camera name; "" for other kinds
 * @param state {@code STAGING} (bytes arriving), {@code LANDED} (in the raw layer, not ingested yet) or
 *     {@code INGEST_FAILED}
 * @param landedPath where it landed, relative to the lake root ({@code raw/<robot>/...}); "" while staging
 * @param message why ingest failed, or what a landed sidecar waits for; ""
 * @param createdAtNs when BEGIN first arrived, ns since the Unix epoch
 * @param updatedAtNs when the state last changed, ns since the Unix epoch
 */
public record StagedUpload(String uploadId, String robotId, String sha256, long sizeBytes, String kind,
        String fileName, String episodeId, String recordingSha256, String camera, String state, String landedPath,
        String message, long createdAtNs, long updatedAtNs) {
    /** State: bytes are arriving in the staging file. */
    public static final String STAGING = "STAGING";
    /** State: verified and in the raw layer, waiting for (or in) ingest. */
    public static final String LANDED = "LANDED";
    /** State: landed, ingest could not read it. */
    public static final String INGEST_FAILED = "INGEST_FAILED";

    public StagedUpload {
        episodeId = episodeId == null ? "" : episodeId;
        recordingSha256 = recordingSha256 == null ? "" : recordingSha256;
        camera = camera == null ? "" : camera;
        landedPath = landedPath == null ? "" : landedPath;
        message = message == null ? "" : message;
        fileName = fileName == null ? "" : fileName;
    }

    /** @return the declared kind */
    public FileKind fileKind() {
        return FileKind.valueOf(kind);
    }

    /** @return whether it is a sidecar video (ingested with its recording, not on its own) */
    public boolean sidecar() {
        return FileKind.SIDECAR_MP4.name().equals(kind);
    }

    /**
     * @return the name it lands with in {@code raw/<robot>/}: {@code <sha256>.mcap}, {@code <sha256>.bag}, or for a
     *     sidecar {@code <recording_sha256>.<camera>.mp4} (the name ingest finds sidecars by)
     */
    public String landedName() {
        return switch (fileKind()) {
            case MCAP -> sha256 + ".mcap";
            case ROS1_BAG -> sha256 + ".bag";
            case SIDECAR_MP4 -> recordingSha256 + "." + camera + ".mp4";
            default -> throw new IllegalStateException("upload " + uploadId + " has kind " + kind);
        };
    }

    /** @return this upload in another state, updated now */
    public StagedUpload withState(String newState, String newLandedPath, String newMessage) {
        return new StagedUpload(uploadId, robotId, sha256, sizeBytes, kind, fileName, episodeId, recordingSha256, camera,
                newState, newLandedPath, newMessage, createdAtNs, System.currentTimeMillis() * 1_000_000L);
    }
}
