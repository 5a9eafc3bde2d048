package io.flywheel.serve.export;

import java.util.Arrays;

/**
 * Options of a {@link LeRobotExporter} run. Build with {@link #builder()}.
 *
 * @param fps frames per second of the dataset, or 0 (default) for the set's training rate
 *     (lineage {@code sample_rate_hz}), or, when that is 0, the rate of its frame timestamps
 *     (1 s over the median interval, rounded when within 1 % of a whole number); LeRobot's
 *     {@code fps} is an int, so a fractional rate is refused unless given here
 * @param robotType {@code robot_type} in info.json, or null (default) for the robot id the set's
 *     episodes share ({@code "mixed: a, b"} when they differ, {@code "unknown"} when none is recorded)
 * @param force replace an existing output folder (only one that is empty or holds a LeRobot
 *     dataset, i.e. has {@code meta/info.json})
 * @param keyframeInterval frames between keyframes of the videos, &ge; 1, or 0 (default) for half a second of
 *     frames ({@code fps / 2}, at least 1): a random frame decodes from at most that many frames earlier. LeRobot's own
 *     encoder uses {@code g=2} (fastest random access, files about 3x larger); pass 2 for that
 * @param resample place each sample on the fps grid by its recorded time, holding the previous sample in the slots
 *     of dropped frames and marking them ({@code flywheel.filled} = 1); without it an episode whose samples have a gap
 *     (over 1.5 sample periods) is refused, since numbering its frames would shift every later frame early
 * @param resolution the videos' size: null (default) for each camera's own resolution from the raw images, "hot" for
 *     enrich's hot copies as they are, or "WIDTHxHEIGHT" to scale every camera to that size
 * @param fillMissingCameras export every camera any episode has, with black frames where an episode has none of a
 *     camera's images; without it (default) the episodes whose cameras are not the set's most common set are left
 *     out, named
 * @param bitRate video bits per second, 0 (default) for the encoder's automatic rate
 * @param chunksSize files per chunk folder, &ge; 1 (default 1000, LeRobot's DEFAULT_CHUNK_SIZE)
 * @param dataFileSizeMb data Parquet file size above which a new file starts (default 100)
 * @param videoFileSizeMb MP4 file size above which a new file starts (default 500)
 */
public record LeRobotExportOptions(int fps, String robotType, boolean force, int keyframeInterval, long bitRate,
                                   int chunksSize, int dataFileSizeMb, int videoFileSizeMb, boolean resample,
                                   String resolution, boolean fillMissingCameras) {
    /** @throws IllegalArgumentException when a number is out of range or the resolution is not one */
    public LeRobotExportOptions {
        if (resolution != null && !resolution.equals("hot")) {
            if (!resolution.matches("[1-9][0-9]{0,4}x[1-9][0-9]{0,4}")) {
                throw new IllegalArgumentException("resolution '" + resolution + "': expected hot or WIDTHxHEIGHT, e.g. 640x480");
            }
            int[] wh = Arrays.stream(resolution.split("x")).mapToInt(Integer::parseInt).toArray();
            if (wh[0] % 2 != 0 || wh[1] % 2 != 0) {
                throw new IllegalArgumentException("resolution '" + resolution + "': H.264 in yuv420p needs an even"
                        + " width and height, e.g. " + (wh[0] + wh[0] % 2) + "x" + (wh[1] + wh[1] % 2));
            }
        }
        if (fps < 0 || keyframeInterval < 0 || bitRate < 0 || chunksSize < 1 || dataFileSizeMb < 1 || videoFileSizeMb < 1) {
            throw new IllegalArgumentException("export options out of range: fps " + fps + " (>= 0), keyframe interval "
                    + keyframeInterval + " (>= 0), bit rate " + bitRate + " (>= 0), chunks size " + chunksSize
                    + ", file sizes " + dataFileSizeMb + "/" + videoFileSizeMb + " MB (>= 1)");
        }
    }

    /** @return defaults: see the record's parameters */
    public static LeRobotExportOptions defaults() {
        return builder().build();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder of {@link LeRobotExportOptions}. */
    public static final class Builder {
        private int fps;
        private String robotType;
        private boolean force;
        private int keyframeInterval;
        private boolean resample;
        private String resolution;
        private boolean fillMissingCameras;
        private long bitRate;
        private int chunksSize = 1000;
        private int dataFileSizeMb = 100;
        private int videoFileSizeMb = 500;

        private Builder() {}

        /** @param v frames per second, 0 for the set's rate */
        public Builder fps(int v) { fps = v; return this; }

        /** @param v robot_type, null for automatic */
        public Builder robotType(String v) { robotType = v; return this; }

        /** @param v replace an existing output folder */
        public Builder force(boolean v) { force = v; return this; }

        /** @param v frames between video keyframes */
        public Builder keyframeInterval(int v) { keyframeInterval = v; return this; }

        /** @param v place samples on the fps grid by time, filling dropped frames */
        public Builder resample(boolean v) { resample = v; return this; }

        /** @param v null (camera's own), "hot" or "WIDTHxHEIGHT" */
        public Builder resolution(String v) { resolution = v; return this; }

        /** @param v black frames for a camera an episode lacks, instead of leaving the episode out */
        public Builder fillMissingCameras(boolean v) { fillMissingCameras = v; return this; }

        /** @param v video bits per second, 0 automatic */
        public Builder bitRate(long v) { bitRate = v; return this; }

        /** @param v files per chunk folder */
        public Builder chunksSize(int v) { chunksSize = v; return this; }

        /** @param v data file size limit in MB */
        public Builder dataFileSizeMb(int v) { dataFileSizeMb = v; return this; }

        /** @param v video file size limit in MB */
        public Builder videoFileSizeMb(int v) { videoFileSizeMb = v; return this; }

        /** @return the options */
        public LeRobotExportOptions build() {
            return new LeRobotExportOptions(fps, robotType, force, keyframeInterval, bitRate, chunksSize, dataFileSizeMb,
                    videoFileSizeMb, resample, resolution, fillMissingCameras);
        }
    }
}
