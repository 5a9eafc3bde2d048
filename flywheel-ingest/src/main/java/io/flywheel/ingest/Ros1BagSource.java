package io.flywheel.ingest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.ros.bag.BagMessage;
import io.flywheel.ros.bag.BagReader;
import io.flywheel.ros.bag.Connection;
import io.flywheel.ros.ros1.Ros1Decoder;

/**
 * Reads a ROS 1 bag (format 2.0) into a {@link Collector} with {@link BagReader} (log-time order through
 * the index; file order when the bag has no index) and {@link Ros1Decoder}. Header stamps come from
 * {@code header.stamp}. A camera image ({@code sensor_msgs/CompressedImage} or {@code sensor_msgs/Image}) gets a
 * {@link RawLocator} at its {@code data} bytes: a plain file range when the message lies uncompressed in the
 * file (no chunk, or chunk compression {@code none}); else the bag chunk record's offset with the offset inside
 * the decompressed chunk and the chunk's compression ({@code bz2}, {@code lz4}). ROS 1 serialization has no
 * padding (ROS wiki, "ROS/Technical Overview", message serialization): the header is uint32 seq, time stamp
 * (2 x uint32), string frame_id (uint32 length + bytes); then CompressedImage: string format, uint8[] data;
 * Image: uint32 height, uint32 width, string encoding, uint8 is_bigendian, uint32 step, uint8[] data.
 * A {@code foxglove_msgs/CompressedVideo} (ROS 1: {@code time timestamp, string frame_id, uint8[] data,
 * string format}) gets a locator at its {@code data} (one H.264 / H.265 access unit, Annex B) with the
 * message's format ({@code h264}, {@code h265}); its time stamp is {@code timestamp}.
 */
final class Ros1BagSource {
    private Ros1BagSource() {}

    /** Stores the locator of a CompressedImage / Image message's data bytes; other camera types get none. */
    private static void locate(StreamBuilder sb, int i, BagMessage m, Object tree, String uri, Path path)
            throws IngestException {
        String type = Values.shortType(sb.messageType);
        boolean raw = type.equals("Image");
        boolean video = type.equals("CompressedVideo");
        if (!raw && !video && !type.equals("CompressedImage") || !(tree instanceof Map<?, ?> t)) {
            return;
        }
        ByteBuffer d = m.data().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int base = d.position();
        int end = d.limit();
        // header: seq, stamp.sec, stamp.nsec; CompressedVideo: time timestamp (sec, nsec), no seq
        int[] p = {base + (video ? 8 : 12)};
        skipString(d, p, end, m, path);  // header.frame_id / frame_id
        if (video) {
            // uint8[] data follows frame_id; string format comes after it
        } else if (raw) {
            p[0] += 8;                   // height, width
            skipString(d, p, end, m, path); // encoding
            p[0] += 5;                   // is_bigendian, step
        } else {
            skipString(d, p, end, m, path); // format
        }
        if (p[0] + 4 > end) {
            throw new IngestException(path.toString(), m.chunkPosition(), "image message on " + sb.topic
                    + " at log time " + m.logTime() + " ends before its data length");
        }
        long len = Integer.toUnsignedLong(d.getInt(p[0]));
        int off = p[0] + 4 - base;
        if (len > end - p[0] - 4) {
            throw new IngestException(path.toString(), m.chunkPosition(), "image message on " + sb.topic + " at log time "
                    + m.logTime() + " declares " + len + " data bytes, " + (end - p[0] - 4) + " remain");
        }
        String format = raw ? String.valueOf(t.get("encoding")) : McapSource.normaliseFormat(String.valueOf(t.get("format")));
        int w = raw && t.get("width") instanceof Number x ? x.intValue() : 0;
        int h = raw && t.get("height") instanceof Number x ? x.intValue() : 0;
        RawLocator loc;
        if (m.fileOffset() >= 0) {
            loc = new RawLocator(uri, -1, m.fileOffset() + off, (int) len, "", format, w, h);
        } else if (m.chunkPosition() >= 0) {
            loc = new RawLocator(uri, m.chunkPosition(), m.offsetInChunk() + off, (int) len, m.compression(), format, w, h);
        } else {
            return; // position unknown
        }
        sb.locator(i, loc);
    }

    private static void skipString(ByteBuffer d, int[] p, int end, BagMessage m, Path path) throws IngestException {
        if (p[0] + 4 > end) {
            throw new IngestException(path.toString(), m.chunkPosition(), "image message on " + m.topic()
                    + " at log time " + m.logTime() + " ends inside its header");
        }
        long n = Integer.toUnsignedLong(d.getInt(p[0]));
        if (n > end - p[0] - 4) {
            throw new IngestException(path.toString(), m.chunkPosition(), "image message on " + m.topic()
                    + " at log time " + m.logTime() + ": a string declares " + n + " bytes, " + (end - p[0] - 4) + " remain");
        }
        p[0] += 4 + (int) n;
    }

    private static BagReader open(Path path, RawFiles raw) throws IOException {
        if (raw.isLocal(path)) {
            return BagReader.open(path);
        }
        String name = raw.name(path);
        io.flywheel.raw.RawChannel ch = raw.open(path);
        return BagReader.open(new BagReader.Source() {
            @Override
            public long size() throws IOException {
                return ch.size();
            }

            @Override
            public void read(long pos, java.nio.ByteBuffer dst) throws IOException {
                ch.readFully(dst, pos, name);
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        }, name);
    }

    static void read(Path path, Collector out) throws IOException {
        read(path, out, null);
    }

    static void read(Path path, Collector out, java.util.Set<String> topics) throws IOException {
        read(path, out, topics, RawFiles.local());
    }

    /**
     * @param topics the topics to read, null for all
     * @param raw where the bag is read from (a remote one by positioned reads) and the URI its locators name
     */
    static void read(Path path, Collector out, java.util.Set<String> topics, RawFiles raw) throws IOException {
        Map<Integer, MessageDecoder> decoders = new HashMap<>();
        String uri = raw.uri(path);
        try (BagReader r = open(path, raw)) {
            for (Connection c : r.connections().values()) {
                if (topics == null || topics.contains(c.topic())) out.stream(c.topic(), c.id(), c.type());
            }
            BagReader.Order order = r.hasIndex() ? BagReader.Order.LOG_TIME : BagReader.Order.FILE;
            BagReader.ReadOptions.Builder ro = BagReader.ReadOptions.builder().order(order);
            if (topics != null) ro.topics(topics);
            r.read(ro.build(), (BagMessage m) -> {
                Connection c = m.connection();
                StreamBuilder sb = out.stream(c.topic(), c.id(), c.type());
                MessageDecoder dec = decoders.get(c.id());
                if (dec == null) {
                    try {
                        dec = Ros1Decoder.forDefinition(c.type(), c.messageDefinition());
                    } catch (DecodeException e) {
                        throw new IngestException(path.toString(), -1, "connection " + c.id() + " (" + c.topic() + ", "
                                + c.type() + "): message definition does not parse: " + e.getMessage(), e);
                    }
                    decoders.put(c.id(), dec);
                }
                Object tree;
                try {
                    tree = dec.decode(m.data());
                } catch (DecodeException e) {
                    throw new IngestException(path.toString(), -1, "message on " + c.topic() + " (" + c.type()
                            + ") at log time " + m.logTime() + " does not decode: " + e.getMessage(), e);
                }
                if (Values.hasStamp(tree)) sb.hasHeader(true);
                int i = sb.add(m.logTime(), Values.stamp(tree));
                McapSource.tree(sb, i, tree);
                if (sb.role == StreamRole.CAMERA) {
                    locate(sb, i, m, tree, uri, path);
                }
            });
        }
    }
}
