package io.flywheel.mcap;

/**
 * One message as a reader yields it, with the Channel it was logged on and that channel's Schema.
 *
 * @param schema the channel's schema, or null for a schemaless channel (schema id 0)
 * @param channel the message's channel
 * @param message the message; its {@code data} is a read-only view into the decompressed chunk
 *     (valid as long as the view is referenced)
 */
public record MessageView(Record.Schema schema, Record.Channel channel, Record.Message message) {

    /** @return the channel's topic */
    public String topic() {
        return channel.topic();
    }

    /** @return uint64 log time in nanoseconds */
    public long logTime() {
        return message.logTime();
    }

    /** @return uint64 publish time in nanoseconds */
    public long publishTime() {
        return message.publishTime();
    }
}
