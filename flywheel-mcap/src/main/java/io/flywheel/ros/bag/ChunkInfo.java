package io.flywheel.ros.bag;

import java.util.Map;

/**
 * One chunk info record (op 0x06) from a ROS 1 bag's index section.
 *
 * @param chunkPosition absolute byte offset of the chunk record in the file
 * @param startTime earliest message time in the chunk, int64 nanoseconds since the Unix epoch
 * @param endTime latest message time in the chunk, int64 nanoseconds since the Unix epoch
 * @param messageCounts connection id -> number of messages of that connection in the chunk,
 *     in the record's order; unmodifiable
 */
public record ChunkInfo(long chunkPosition, long startTime, long endTime, Map<Integer, Long> messageCounts) {
    public ChunkInfo {
        messageCounts = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(messageCounts));
    }
}
