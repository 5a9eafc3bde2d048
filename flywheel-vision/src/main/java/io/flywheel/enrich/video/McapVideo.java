package io.flywheel.enrich.video;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.mcap.MessageView;

/**
 * Decodes the foxglove.CompressedVideo messages of one MCAP topic into frames timed by the log
 * time of the message that carried them. Each message's {@code data} is one H.264 or H.265
 * access unit in Annex B format (see {@link AnnexBDecoder}); the {@code format} field picks the
 * codec and must not change within the topic. Messages before the first keyframe are skipped
 * and counted. Works for any message encoding {@link Decoders} reads (cdr, ros1, json, protobuf).
 */
public final class McapVideo {
    private McapVideo() {}

    /** Receives decoded frames in presentation order. */
    @FunctionalInterface
    public interface FrameSink {
        /**
         * @param frame a decoded frame; {@code timestampNs} is the log time of its message
         * @throws IOException to stop decoding
         */
        void accept(VideoFrame frame) throws IOException;
    }

    /**
     * What {@link #decodeTopic} read.
     *
     * @param topic                 the topic
     * @param codec                 the codec named by the messages' {@code format}, null when the
     *                              topic had no message
     * @param messages              messages read
     * @param frames                frames decoded and handed to the sink
     * @param skippedBeforeKeyframe messages skipped because no keyframe preceded them
     * @param width                 frame width, 0 when no frame was decoded
     * @param height                frame height, 0 when no frame was decoded
     */
    public record Summary(String topic, VideoCodec codec, long messages, long frames, long skippedBeforeKeyframe,
                          int width, int height) {}

    /**
     * Decodes one topic of an MCAP file, in log-time order.
     *
     * @param file    the MCAP file
     * @param topic   a topic whose schema is foxglove.CompressedVideo
     * @param options decoder strictness and threads
     * @param sink    receives every decoded frame
     * @return counts and frame size
     * @throws VideoFormatException when a message is not a CompressedVideo, names an unsupported
     *     format, changes format, or holds a corrupt or truncated access unit; the message names
     *     the file, topic, message index (0-based within the topic) and log time
     * @throws IOException when the MCAP file cannot be read (McapFormatException names the offset)
     */
    public static Summary decodeTopic(Path file, String topic, DecoderOptions options, FrameSink sink) throws IOException {
        Objects.requireNonNull(sink, "sink");
        Map<Integer, MessageDecoder> decoders = new HashMap<>();
        String source = file + " topic " + topic;
        AnnexBDecoder decoder = null;
        long messages = 0;
        long frames = 0;
        int width = 0;
        int height = 0;
        try (McapMessages m = McapMessages.open(file,
                McapIndexedReader.ReadOptions.builder().topic(topic).build())) {
            MessageView v;
            while ((v = m.next()) != null) {
                long index = messages++;
                long logTime = v.logTime();
                String where = source + " message " + index + " (log time " + logTime + " ns)";
                CompressedVideoMessage msg = parse(v, decoders, where);
                VideoCodec codec;
                try {
                    codec = VideoCodec.fromFormat(msg.format());
                } catch (IllegalArgumentException e) {
                    throw new VideoFormatException(where + ": " + e.getMessage());
                }
                if (decoder == null) {
                    decoder = AnnexBDecoder.open(codec, source, options);
                } else if (decoder.codec() != codec) {
                    throw new VideoFormatException(where + ": format changed from " + decoder.codec().format() + " to "
                            + msg.format() + " within the topic");
                }
                // the decoder's errors name the source, the access unit index (= message index) and time
                for (VideoFrame f : decoder.decode(msg.data(), logTime)) {
                    frames++;
                    width = f.image().width();
                    height = f.image().height();
                    sink.accept(f);
                }
            }
            if (decoder != null) {
                for (VideoFrame f : decoder.flush()) {
                    frames++;
                    width = f.image().width();
                    height = f.image().height();
                    sink.accept(f);
                }
            }
            return new Summary(topic, decoder == null ? null : decoder.codec(), messages, frames,
                    decoder == null ? 0 : decoder.skippedBeforeKeyframe(), width, height);
        } finally {
            if (decoder != null) {
                decoder.close();
            }
        }
    }

    private static CompressedVideoMessage parse(MessageView v, Map<Integer, MessageDecoder> decoders, String where)
            throws VideoFormatException {
        if (v.schema() == null) {
            throw new VideoFormatException(where + ": the channel has no schema; expected foxglove.CompressedVideo");
        }
        try {
            MessageDecoder d = decoders.get(v.schema().id());
            if (d == null) {
                byte[] schema = new byte[v.schema().data().remaining()];
                v.schema().data().duplicate().get(schema);
                d = Decoders.forSchema(v.channel().messageEncoding(), v.schema().name(), v.schema().encoding(), schema);
                decoders.put(v.schema().id(), d);
            }
            ByteBuffer data = v.message().data();
            return CompressedVideoMessage.fromTree(d.decode(data));
        } catch (DecodeException | IllegalArgumentException e) {
            throw new VideoFormatException(where + " (schema " + v.schema().name() + "): " + e.getMessage(), e);
        }
    }
}
