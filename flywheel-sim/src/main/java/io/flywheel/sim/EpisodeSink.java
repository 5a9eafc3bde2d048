package io.flywheel.sim;

import java.io.IOException;
import java.util.Map;

/**
 * Where one episode's records go: in production an indexed, zstd-chunked MCAP file
 * ({@link McapEpisodeSink}); in tests possibly memory. Calls follow the MCAP record model
 * (https://mcap.dev/spec: Schema, Channel, Message, Metadata). Not thread-safe.
 */
public interface EpisodeSink extends AutoCloseable {

    /**
     * @param name schema name, e.g. "sensor_msgs/msg/CompressedImage"
     * @param encoding schema encoding, e.g. "ros2msg"
     * @param data schema text bytes
     * @return the schema id (>= 1)
     */
    int registerSchema(String name, String encoding, byte[] data) throws IOException;

    /**
     * @param topic e.g. "/head_camera/image_raw/compressed"
     * @param messageEncoding e.g. "cdr"
     * @param schemaId from {@link #registerSchema}
     * @param metadata channel metadata (rosbag2: offered_qos_profiles)
     * @return the channel id
     */
    int registerChannel(String topic, String messageEncoding, int schemaId, Map<String, String> metadata)
            throws IOException;

    /**
     * @param channelId from {@link #registerChannel}
     * @param sequence uint32 per-channel sequence number
     * @param logTime ns since the Unix epoch, when the recorder received it
     * @param publishTime ns since the Unix epoch
     * @param data message bytes [offset, offset+length)
     */
    void writeMessage(int channelId, long sequence, long logTime, long publishTime, byte[] data, int offset, int length)
            throws IOException;

    /** Writes a Metadata record. */
    void writeMetadata(String name, Map<String, String> metadata) throws IOException;

    /** Finishes the file (summary, footer). */
    @Override
    void close() throws IOException;
}
