/**
 * Ingest: reads raw robot recordings into one storage-free model.
 *
 * <p>Entry points: {@link io.flywheel.ingest.Ingest#read(java.nio.file.Path, io.flywheel.ingest.IngestOptions)}
 * gives a {@link io.flywheel.ingest.Recording} (raw files with SHA-256, episodes); each
 * {@link io.flywheel.ingest.Episode} holds one {@link io.flywheel.ingest.StreamData} per topic with its
 * {@link io.flywheel.ingest.StreamRole}, chosen times ({@link io.flywheel.align.TimestampRule} of flywheel-core and
 * {@link io.flywheel.ingest.TimestampReport}), values, and for cameras one
 * {@link io.flywheel.ingest.RawLocator} per frame that {@link io.flywheel.ingest.LocatorReader} reads back
 * from the raw file. Roles come from a {@link io.flywheel.ingest.RobotProfile} (YAML) or are detected.
 * Formats: MCAP (ROS 2 CDR, JSON, protobuf), split rosbag2, ROS 1 bag, RLDS TFRecord
 * ({@link io.flywheel.ingest.Sources} detects them by content).
 */
package io.flywheel.ingest;
