package io.flywheel.ingest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.ros.cdr.CdrFastPaths;

/**
 * Reads a rosbag2 sqlite3 recording ({@link Rosbag2SqliteBag}) into a {@link Collector}, with the same per-role
 * handling as the MCAP path ({@link McapSource}), so a sqlite3 bag and its MCAP conversion give the same streams:
 * JointState state and gripper topics through the CDR fast path, cameras by their header stamps, side topics
 * ({@link StreamRole#OTHER}) by header stamp when their type starts with a {@code std_msgs/Header} and by log time
 * otherwise (also when their type cannot be decoded), every other role decoded whole with the topic's definition.
 *
 * <p>Camera images are not located: SQLite keeps a large blob across overflow pages, so the image bytes are no
 * single byte range of the file. The camera's frames keep their times, and the recording's metadata names the
 * cameras ({@code rosbag2.cameras_without_images}); {@code ros2 bag convert} to MCAP gives located images.
 */
final class Rosbag2SqliteSource {
    private Rosbag2SqliteSource() {}

    private enum Kind { COMPRESSED_IMAGE, IMAGE, VIDEO, JOINT_STATE, HEADER, LOG_ONLY, TREE }

    private record Plan(StreamBuilder stream, Kind kind, MessageDecoder decoder) {}

    /**
     * @param source a located sqlite3 bag
     * @param out receives streams and recording metadata
     * @return the bag's files as source files (absolute URI, SHA-256, size), in order
     * @throws IngestException naming the file when the bag is broken or a topic that needs decoding cannot be
     * @throws IOException when reading fails
     */
    static List<SourceFile> read(Sources.Source source, Collector out, RawFiles raw) throws IOException {
        List<SourceFile> files = new ArrayList<>();
        for (java.nio.file.Path p : source.files()) files.add(Sources.sourceFile(p, raw));
        try (Rosbag2SqliteBag bag = Rosbag2SqliteBag.open(source)) {
            Map<String, Plan> plans = new HashMap<>();
            List<String> cameras = new ArrayList<>();
            int id = 0;
            for (Rosbag2SqliteBag.Topic t : bag.topics()) {
                StreamBuilder sb = out.stream(t.name(), ++id, t.type());
                Plan p = plan(bag, sb, t);
                plans.put(t.name(), p);
                if (sb.role == StreamRole.CAMERA) cameras.add(t.name());
            }
            bag.messages(null, Long.MIN_VALUE, Long.MAX_VALUE, m -> message(plans.get(m.topic().name()), m));
            Rosbag2Metadata md = bag.metadata();
            out.recordingMetadata.put("rosbag2.storage", "sqlite3");
            out.recordingMetadata.put("rosbag2.metadata_version", Integer.toString(md.version()));
            if (!md.rosDistro().isEmpty()) out.recordingMetadata.put("rosbag2.ros_distro", md.rosDistro());
            if (!md.compressionFormat().isEmpty()) {
                out.recordingMetadata.put("rosbag2.compression", md.compressionFormat() + "/" + md.compressionMode());
            }
            md.customData().forEach((k, v) -> out.recordingMetadata.put("rosbag2.custom_data." + k, v));
            if (!cameras.isEmpty()) out.recordingMetadata.put("rosbag2.cameras_without_images", String.join(",", cameras));
            if (!bag.notes().isEmpty()) out.recordingMetadata.put("rosbag2.notes", String.join("; ", bag.notes()));
        }
        return files;
    }

    private static Plan plan(Rosbag2SqliteBag bag, StreamBuilder sb, Rosbag2SqliteBag.Topic t) throws IOException {
        String shortType = Values.shortType(t.type());
        Kind kind;
        if (sb.role == StreamRole.CAMERA && shortType.equals("CompressedImage")) kind = Kind.COMPRESSED_IMAGE;
        else if (sb.role == StreamRole.CAMERA && shortType.equals("CompressedVideo")) kind = Kind.VIDEO;
        else if (sb.role == StreamRole.CAMERA && shortType.equals("Image")) kind = Kind.IMAGE;
        else if ((sb.role == StreamRole.STATE || sb.role == StreamRole.GRIPPER) && shortType.equals("JointState")) {
            kind = Kind.JOINT_STATE;
        } else if (sb.role == StreamRole.OTHER) {
            kind = bag.definition(t.type()).map(d -> headerFirst(d.text())).orElse(false) ? Kind.HEADER : Kind.LOG_ONLY;
        } else {
            kind = Kind.TREE;
        }
        if (kind != Kind.LOG_ONLY && kind != Kind.TREE) sb.hasHeader(true);
        return new Plan(sb, kind, kind == Kind.TREE ? bag.decoder(t.name()) : null);
    }

    private static void message(Plan p, Rosbag2SqliteBag.Message m) throws IngestException {
        StreamBuilder sb = p.stream;
        ByteBuffer data = m.data();
        try {
            switch (p.kind) {
                case COMPRESSED_IMAGE -> sb.add(m.logTimeNs(), CdrFastPaths.compressedImage(data).stampNs());
                case IMAGE -> sb.add(m.logTimeNs(), CdrFastPaths.image(data).stampNs());
                case VIDEO -> sb.add(m.logTimeNs(), CdrImageLayout.video(data).stampNs());
                case JOINT_STATE -> {
                    CdrFastPaths.JointState js = CdrFastPaths.jointState(data);
                    int i = sb.add(m.logTimeNs(), js.stampNs());
                    if (sb.role == StreamRole.GRIPPER) {
                        sb.value(i, js.position().length == 0 ? new double[0] : new double[] {js.position()[0]});
                    } else {
                        sb.value(i, js.position());
                        if (js.names().size() == js.position().length) sb.names(js.names());
                    }
                }
                case HEADER -> sb.add(m.logTimeNs(), CdrFastPaths.headerStamp(data));
                case LOG_ONLY -> sb.add(m.logTimeNs(), 0);
                case TREE -> {
                    Object tree = p.decoder.decode(data);
                    if (Values.hasStamp(tree)) sb.hasHeader(true);
                    int i = sb.add(m.logTimeNs(), Values.stamp(tree));
                    McapSource.tree(sb, i, tree);
                }
            }
        } catch (DecodeException e) {
            throw new IngestException(m.file().toString(), -1, "message " + m.rowId() + " (table messages) on "
                    + sb.topic + " (" + sb.messageType + ") at log time " + m.logTimeNs() + " does not decode: "
                    + e.getMessage(), e);
        }
    }

    /** @return whether a ros2msg definition's first field is a std_msgs/Header */
    static boolean headerFirst(String text) {
        for (String line : text.split("\n")) {
            String l = line.strip();
            int hash = l.indexOf('#');
            if (hash >= 0) l = l.substring(0, hash).strip();
            if (l.isEmpty()) continue;
            if (l.startsWith("MSG:") || l.startsWith("===")) return false;
            String t = l.split("\\s+")[0];
            return t.equals("std_msgs/Header") || t.equals("Header") || t.equals("std_msgs/msg/Header");
        }
        return false;
    }
}
