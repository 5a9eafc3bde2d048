package io.flywheel.fleet.live;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

import io.flywheel.decode.DecodeException;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.FrameFilter;
import io.flywheel.fleet.client.LiveEpisode;
import io.flywheel.fleet.client.LiveEpisodeSpec;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrFastPaths;

/**
 * Streams a recorded MCAP file as a live episode, as a robot's recorder would have while recording it: OPEN with the
 * file's profile and channels (schemas and channel metadata), every message in file order through
 * {@link LiveEpisode#send}, or {@link LiveEpisode#sendImage} for the frames of CDR
 * {@code sensor_msgs/msg/CompressedImage} channels (the episode's frame filter hashes the image inside), and END with
 * the file's {@code episode} metadata. For tests, benchmarks and demonstrations: the gateway side of a fleet without a
 * fleet. Messages are read one at a time, never the whole file at once.
 */
public final class McapReplay {
    private McapReplay() {}

    /**
     * One message of the file.
     *
     * @param topic its channel's topic
     * @param logTimeNs log time, ns
     * @param publishTimeNs publish time, ns
     * @param data its bytes (a view, valid until the next message is read)
     */
    public record Message(String topic, long logTimeNs, long publishTimeNs, ByteBuffer data) {}

    /**
     * What a file's summary holds for an OPEN: profile, channels (in id order) and the {@code episode} metadata.
     *
     * @param profile the header's profile
     * @param channels the channels
     * @param metadata the Metadata record "episode", empty when none
     * @param images the topics of CDR CompressedImage channels
     */
    public record Layout(String profile, List<LiveEpisodeSpec.Channel> channels, Map<String, String> metadata,
            List<String> images) {}

    /** @return the file's layout */
    public static Layout layout(Path mcap) throws IOException {
        try (McapIndexedReader r = McapIndexedReader.open(mcap)) {
            List<LiveEpisodeSpec.Channel> channels = new ArrayList<>();
            List<String> images = new ArrayList<>();
            for (Record.Channel c : new TreeMap<>(r.channels()).values()) {
                Record.Schema s = r.schemas().get(c.schemaId());
                byte[] data = new byte[0];
                if (s != null) {
                    data = new byte[s.data().remaining()];
                    s.data().duplicate().get(data);
                }
                channels.add(new LiveEpisodeSpec.Channel(c.topic(), c.messageEncoding(), s == null ? "" : s.name(),
                        s == null ? "" : s.encoding(), data, new LinkedHashMap<>(c.metadata())));
                if (s != null && c.messageEncoding().equals(Ros2Schemas.MESSAGE_ENCODING)
                        && s.name().equals(Ros2Schemas.COMPRESSED_IMAGE_NAME)) {
                    images.add(c.topic());
                }
            }
            Map<String, String> md = new LinkedHashMap<>();
            for (Record.MetadataIndex mi : r.metadataIndexes()) {
                if (mi.name().equals("episode")) {
                    md.putAll(r.readMetadata(mi).metadata());
                }
            }
            return new Layout(r.header().profile(), channels, md, images);
        }
    }

    /**
     * Streams the file as episode {@code episodeId} of robot {@code robotId}.
     *
     * @param client the robot's client
     * @param mcap the recording
     * @param robotId the robot (the client's token's)
     * @param episodeId the episode's id
     * @param filter the frame filter for the image channels, or null to send every frame
     * @param offer which messages the robot has at all (a message it does not offer is lost, as a dropped frame is);
     *     {@code m -> true} for all
     * @return the gateway's answer and the client's counts
     * @throws IOException when the file cannot be read or an image message does not decode
     * @throws io.flywheel.fleet.client.UploadFailedException when the gateway refuses the episode
     */
    public static LiveEpisode.Result stream(FleetClient client, Path mcap, String robotId, String episodeId,
            FrameFilter filter, Predicate<Message> offer) throws IOException, InterruptedException {
        Layout layout = layout(mcap);
        LiveEpisodeSpec.Builder spec = LiveEpisodeSpec.builder(robotId, episodeId).profile(layout.profile())
                .filter(filter);
        layout.channels().forEach(spec::channel);
        Map<Integer, String> topics = new HashMap<>();
        try (LiveEpisode ep = client.openEpisode(spec.build()); McapStreamReader r = McapStreamReader.open(mcap)) {
            for (Record rec; (rec = r.next()) != null; ) {
                if (rec instanceof Record.Channel c) {
                    topics.put(c.id(), c.topic());
                } else if (rec instanceof Record.Message m) {
                    String topic = topics.get(m.channelId());
                    Message msg = new Message(topic, m.logTime(), m.publishTime(), m.data());
                    if (!offer.test(msg)) {
                        continue;
                    }
                    byte[] data = new byte[m.data().remaining()];
                    m.data().duplicate().get(data);
                    if (layout.images().contains(topic)) {
                        ep.sendImage(topic, m.logTime(), m.publishTime(), data, jpeg(m.data(), mcap));
                    } else {
                        ep.send(topic, m.logTime(), m.publishTime(), data);
                    }
                }
            }
            return ep.end(layout.metadata());
        }
    }

    private static byte[] jpeg(ByteBuffer cdr, Path file) throws IOException {
        try {
            ByteBuffer img = CdrFastPaths.compressedImage(cdr.duplicate()).data();
            byte[] out = new byte[img.remaining()];
            img.duplicate().get(out);
            return out;
        } catch (DecodeException e) {
            throw new IOException(file + ": a CompressedImage message does not decode: " + e.getMessage(), e);
        }
    }
}
