package io.flywheel.ingest;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Every access unit of one video camera in one raw file, with the locator ingest gives it, so that a decoder can
 * be fed the whole stream (a P-frame needs every frame it references, also those the alignment did not keep as
 * frame rows) and the decoded pictures can be matched to frame rows by locator.
 *
 * <ul>
 *   <li>MCAP: the topic's messages in log-time order through the file's index ({@link
 *       io.flywheel.mcap.McapIndexedReader} with a topic filter; a file without a summary is read in full), each
 *       handled as ingest handles it (CDR, JSON or protobuf {@code foxglove.CompressedVideo});</li>
 *   <li>ROS 1 bag: the topic's messages in log-time order ({@link io.flywheel.ros.bag.BagReader} with a topic
 *       filter);</li>
 *   <li>MP4 (a sidecar video, {@link Sidecars}): every sample of the video track in decode order; the topic is
 *       not used (the file is the camera); the time is the sample's presentation time from the track's start.</li>
 * </ul>
 */
public final class VideoUnits {
    private VideoUnits() {}

    /**
     * One access unit.
     *
     * @param locator where its bytes are (read them with {@link LocatorReader}, which gives Annex B)
     * @param logTimeNs the message's log time, ns (MP4: presentation time from the track's start)
     */
    public record Unit(RawLocator locator, long logTimeNs) {}

    /**
     * @param file a raw file
     * @return true when its bytes 4..8 are the box type {@code ftyp} (an ISO BMFF / MP4 file, whose units are samples)
     * @throws IOException when reading fails
     */
    public static boolean isMp4(Path file) throws IOException {
        byte[] head = new byte[8];
        int n;
        try (InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(head, 0, head.length);
        }
        return Mp4SampleTable.looksLikeMp4(head, n);
    }

    /**
     * @param file a raw file (MCAP, ROS 1 bag or MP4)
     * @param topic the camera topic, as recorded in the file
     * @return the topic's units with a locator, in stream order (log time; MP4: decode order)
     * @throws IngestException when the file is not one of these formats or a message does not decode (file, offset)
     * @throws io.flywheel.mcap.McapFormatException when an MCAP file breaks the spec
     * @throws IOException when reading fails
     */
    public static List<Unit> read(Path file, String topic) throws IOException {
        byte[] head = new byte[16];
        int n;
        try (InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(head, 0, head.length);
        }
        String uri = file.toAbsolutePath().normalize().toUri().toString();
        if (Mp4SampleTable.looksLikeMp4(head, n)) {
            Mp4SampleTable t = Mp4SampleTable.read(file);
            List<Unit> out = new ArrayList<>(t.samples().size());
            for (Mp4SampleTable.Sample s : t.samples()) {
                out.add(new Unit(new RawLocator(uri, -1, s.offset(), s.size(), "", t.format(), 0, 0), s.presentationNs()));
            }
            return out;
        }
        Collector c = new Collector(IngestOptions.defaults().profile(), StreamRole.CAMERA);
        switch (Sources.formatOf(file)) {
            case MCAP -> McapSource.readTopic(file, topic, c);
            case ROS1_BAG -> Ros1BagSource.read(file, c, Set.of(topic));
            default -> throw new IngestException(file.toString(), 0, "video units are read from MCAP files, ROS 1 bags"
                    + " and MP4 files only");
        }
        StreamBuilder sb = c.streams.get(topic);
        List<Unit> out = new ArrayList<>();
        if (sb == null) {
            return out;
        }
        for (int i = 0; i < sb.size(); i++) {
            RawLocator l = sb.locatorAt(i);
            if (l != null) out.add(new Unit(l, sb.logTime(i)));
        }
        return out;
    }
}
