/**
 * Resumable episode uploads into a local lake: {@link io.flywheel.fleet.upload.UploadService} receives the
 * {@code UploadEpisode} stream into {@link io.flywheel.fleet.upload.Staging} ({@code <lake>/_staging/uploads/<robot>/}),
 * verifies the SHA-256, lands the file atomically at {@code <lake>/raw/<robot>/<sha256>.<ext>} and hands it to the
 * {@link io.flywheel.fleet.upload.IngestQueue}, which ingests one file at a time with the same code as
 * {@code flywheel ingest}.
 */
package io.flywheel.fleet.upload;
