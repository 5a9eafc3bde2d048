package io.flywheel.fleet.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a live episode is ({@code OpenEpisode} of gateway.proto) and how the client buffers it; built with
 * {@link #builder}. Channel ids are given in declaration order, from 1.
 *
 * @param robotId the robot (the token's)
 * @param episodeId the robot's name of the episode, 1-256 characters, unique per robot
 * @param profile the MCAP header profile, e.g. "ros2"
 * @param metadata the episode metadata (the MCAP Metadata record "episode": task, scene, operator, ...)
 * @param channels the channels, in order
 * @param filter the frame filter of {@link LiveEpisode#sendImage} (each episode starts from a {@link FrameFilter#copy()}
 *     of it); null sends every frame
 * @param maxBufferedMessages messages sent and not acknowledged that the client keeps for a resume, at most (default
 *     4,096); {@link LiveEpisode#send} blocks while the buffer is full
 * @param maxBufferedBytes bytes of those messages at most (default 64 MiB; one message larger than that still fits
 *     in an empty buffer)
 */
public record LiveEpisodeSpec(String robotId, String episodeId, String profile, Map<String, String> metadata,
        List<Channel> channels, FrameFilter filter, int maxBufferedMessages, long maxBufferedBytes) {
    /**
     * One channel: what its MCAP Schema and Channel records hold ({@code ChannelInfo} of gateway.proto).
     *
     * @param topic the topic
     * @param messageEncoding "cdr", "json", "protobuf", ...
     * @param schemaName e.g. "sensor_msgs/msg/CompressedImage"; "" for a schemaless channel
     * @param schemaEncoding e.g. "ros2msg"; "" for none
     * @param schemaData the schema text or bytes; empty for none
     * @param metadata channel metadata
     */
    public record Channel(String topic, String messageEncoding, String schemaName, String schemaEncoding,
            byte[] schemaData, Map<String, String> metadata) {
        public Channel {
            Objects.requireNonNull(topic, "topic");
            Objects.requireNonNull(messageEncoding, "messageEncoding");
            schemaName = schemaName == null ? "" : schemaName;
            schemaEncoding = schemaEncoding == null ? "" : schemaEncoding;
            schemaData = schemaData == null ? new byte[0] : schemaData.clone();
            metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
        }
    }

    public LiveEpisodeSpec {
        Objects.requireNonNull(robotId, "robotId");
        Objects.requireNonNull(episodeId, "episodeId");
        profile = profile == null ? "" : profile;
        metadata = Map.copyOf(metadata);
        channels = List.copyOf(channels);
        if (maxBufferedMessages < 1 || maxBufferedBytes < 1) {
            throw new IllegalArgumentException("the buffer must hold at least 1 message and 1 byte");
        }
    }

    /** @return a builder of the episode {@code episodeId} of robot {@code robotId} */
    public static Builder builder(String robotId, String episodeId) {
        return new Builder(robotId, episodeId);
    }

    /** Builder of a {@link LiveEpisodeSpec}. */
    public static final class Builder {
        private final String robotId;
        private final String episodeId;
        private String profile = "";
        private final Map<String, String> metadata = new LinkedHashMap<>();
        private final List<Channel> channels = new ArrayList<>();
        private FrameFilter filter;
        private int maxBufferedMessages = 4096;
        private long maxBufferedBytes = 64L << 20;

        private Builder(String robotId, String episodeId) {
            this.robotId = robotId;
            this.episodeId = episodeId;
        }

        /** @param p the MCAP header profile, e.g. "ros2" */
        public Builder profile(String p) {
            profile = p;
            return this;
        }

        /** Adds one entry of episode metadata. */
        public Builder metadata(String key, String value) {
            metadata.put(key, value);
            return this;
        }

        /** Declares a channel with a schema. */
        public Builder channel(String topic, String messageEncoding, String schemaName, String schemaEncoding,
                byte[] schemaData) {
            return channel(new Channel(topic, messageEncoding, schemaName, schemaEncoding, schemaData, Map.of()));
        }

        /** Declares a channel. */
        public Builder channel(Channel c) {
            channels.add(c);
            return this;
        }

        /** @param f the frame filter of {@link LiveEpisode#sendImage}; null sends every frame */
        public Builder filter(FrameFilter f) {
            filter = f;
            return this;
        }

        /**
         * @param messages unacknowledged messages kept at most
         * @param bytes their bytes at most
         */
        public Builder buffer(int messages, long bytes) {
            maxBufferedMessages = messages;
            maxBufferedBytes = bytes;
            return this;
        }

        /** @return the spec */
        public LiveEpisodeSpec build() {
            return new LiveEpisodeSpec(robotId, episodeId, profile, metadata, channels, filter, maxBufferedMessages,
                    maxBufferedBytes);
        }
    }
}
