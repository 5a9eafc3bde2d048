package io.flywheel.ingest;

/** The container formats ingest reads. */
public enum SourceFormat {
    /** One MCAP file (https://mcap.dev/spec): ROS 2 CDR, JSON or protobuf messages. */
    MCAP,
    /** A rosbag2 recording of one or more MCAP files (a folder with metadata.yaml, or split files _0, _1...). */
    ROSBAG2,
    /**
     * A rosbag2 recording in the sqlite3 storage: a folder with metadata.yaml and one or more {@code .db3} files
     * ({@link Rosbag2SqliteBag}).
     */
    ROSBAG2_SQLITE3,
    /** A ROS 1 bag, format version 2.0 (http://wiki.ros.org/Bags/Format/2.0). */
    ROS1_BAG,
    /** RLDS episodes as TFRecord files of {@code tf.train.Example} (Open X-Embodiment). */
    RLDS_TFRECORD,
    /**
     * A LeRobotDataset folder (Hugging Face LeRobot, codebase version v2.0, v2.1 or v3.0): meta/info.json, episodes
     * and tasks metadata, data Parquet, videos MP4 ({@link LeRobotSource}).
     */
    LEROBOT
}
