package io.flywheel.ingest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.mcap.ChunkDecompressor;
import io.flywheel.mcap.McapFormatException;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.mcap.RecordParser;
import io.flywheel.ros.cdr.CdrFastPaths;

/**
 * Reads one MCAP file into a {@link Collector}. Uses {@link McapStreamReader} with
 * {@link McapStreamReader.Options.Builder#emitChunks(boolean) emitChunks(true)} and opens each chunk itself
 * ({@link ChunkDecompressor}, {@link RecordParser}) so that every message's chunk offset and offset inside
 * the decompressed chunk are known (MCAP spec, "Chunk" and "Message" records).
 */
final class McapSource {
    /** How a channel's messages are handled. */
    private enum Kind { CDR_COMPRESSED_IMAGE, CDR_IMAGE, CDR_JOINT_STATE, CDR_HEADER, TREE, LOG_ONLY, PROTOBUF_IMAGE,
        JSON_IMAGE }

    /** @param dataField protobuf images: the field number of the {@code data} bytes field */
    private record Plan(StreamBuilder stream, Kind kind, MessageDecoder decoder, boolean raw, int dataField) {}

    private final Path path;
    private final String uri;
    private final String name;
    private final Collector out;
    private final Map<Integer, Record.Schema> schemas = new HashMap<>();
    private final Map<Integer, Plan> plans = new HashMap<>();
    private final Map<Integer, Record.Channel> channels = new HashMap<>();
    /** One zstd context for every chunk of the file (the static form would set one up per chunk). */
    private final ChunkDecompressor decompressor = new ChunkDecompressor();

    private McapSource(Path path, Collector out) {
        this.path = path;
        this.uri = path.toAbsolutePath().normalize().toUri().toString();
        this.name = path.toString();
        this.out = out;
    }

    /**
     * @param path the MCAP file
     * @param out receives streams and metadata
     * @throws McapFormatException when the file breaks the MCAP spec (file, offset, what)
     * @throws IngestException when a message cannot be decoded (file, chunk offset, offset in chunk)
     */
    static void read(Path path, Collector out) throws IOException {
        new McapSource(path, out).run();
    }

    private void run() throws IOException {
        McapStreamReader.Options opts = McapStreamReader.Options.builder().emitChunks(true).build();
        try (McapStreamReader r = McapStreamReader.open(path, opts);
             ChunkDecompressor dec = decompressor) {
            while (true) {
                Record rec = r.next();
                if (rec == null) break;
                long after = r.position();
                if (rec instanceof Record.Header h) {
                    out.recordingMetadata.putIfAbsent("mcap.profile", h.profile());
                    out.recordingMetadata.putIfAbsent("mcap.library", h.library());
                } else if (rec instanceof Record.Schema s) {
                    schemas.putIfAbsent(s.id(), s);
                } else if (rec instanceof Record.Channel c) {
                    channel(c);
                } else if (rec instanceof Record.Message m) {
                    long dataAbs = after - m.data().remaining();
                    message(m, -1, "", dataAbs, dataAbs);
                } else if (rec instanceof Record.Chunk c) {
                    chunk(c, r.recordOffset());
                } else if (rec instanceof Record.Metadata md) {
                    metadata(md);
                }
            }
        }
    }

    private void chunk(Record.Chunk c, long chunkOffset) throws IOException {
        ByteBuffer recs = decompressor.decompressChunk(c, name, chunkOffset, true);
        boolean plain = c.compression().isEmpty();
        long recordsAbs = chunkOffset + 9 + 8 + 8 + 8 + 4 + 4 + c.compression().getBytes(StandardCharsets.UTF_8).length + 8;
        int limit = recs.limit();
        int at = recs.position();
        while (at < limit) {
            if (limit - at < 9) {
                throw new McapFormatException(name, chunkOffset, "chunk records end inside the opcode and length of the"
                        + " record at uncompressed offset " + at);
            }
            int op = recs.get(at) & 0xFF;
            long len = recs.getLong(at + 1);
            if (len < 0 || len > limit - at - 9) {
                throw new McapFormatException(name, chunkOffset, RecordParser.name(op) + " record at uncompressed offset "
                        + at + " declares length " + Long.toUnsignedString(len) + " but the chunk's records end at " + limit);
            }
            if (op == Record.OP_MESSAGE || op == Record.OP_SCHEMA || op == Record.OP_CHANNEL) {
                Record rec = RecordParser.parse(op, recs.slice(at + 9, (int) len), name, chunkOffset);
                if (rec instanceof Record.Schema s) {
                    schemas.putIfAbsent(s.id(), s);
                } else if (rec instanceof Record.Channel ch) {
                    channel(ch);
                } else if (rec instanceof Record.Message m) {
                    long dataInChunk = at + 9 + 22;
                    if (plain) {
                        message(m, -1, "", recordsAbs + dataInChunk, recordsAbs + dataInChunk);
                    } else {
                        message(m, chunkOffset, c.compression(), dataInChunk, chunkOffset);
                    }
                }
            }
            at += 9 + (int) len;
        }
    }

    private void metadata(Record.Metadata md) {
        if (md.name().equals("episode")) {
            md.metadata().forEach(out.episodeMetadata::putIfAbsent);
        } else {
            md.metadata().forEach((k, v) -> out.episodeMetadata.putIfAbsent(md.name() + "." + k, v));
        }
    }

    private void channel(Record.Channel c) throws IOException {
        if (plans.containsKey(c.id())) return;
        Record.Schema s = schemas.get(c.schemaId());
        if (c.schemaId() != 0 && s == null) {
            throw new IngestException(name, -1, "channel " + c.id() + " (" + c.topic() + ") refers to schema " + c.schemaId()
                    + ", which no Schema record before it defines");
        }
        channels.put(c.id(), c);
        String type = s == null ? "" : s.name();
        StreamBuilder sb = out.stream(c.topic(), c.id(), type);
        String enc = c.messageEncoding();
        String shortType = Values.shortType(type);
        Kind kind;
        if (enc.equals("cdr")) {
            if (sb.role == StreamRole.CAMERA && shortType.equals("CompressedImage")) kind = Kind.CDR_COMPRESSED_IMAGE;
            else if (sb.role == StreamRole.CAMERA && shortType.equals("Image")) kind = Kind.CDR_IMAGE;
            else if ((sb.role == StreamRole.STATE || sb.role == StreamRole.GRIPPER) && shortType.equals("JointState")) {
                kind = Kind.CDR_JOINT_STATE;
            } else if (sb.role == StreamRole.OTHER) kind = headerFirst(s) ? Kind.CDR_HEADER : Kind.LOG_ONLY;
            else kind = Kind.TREE;
        } else {
            kind = Kind.TREE;
        }
        MessageDecoder dec = null;
        if (kind == Kind.TREE) {
            byte[] data = s == null ? null : bytes(s.data());
            try {
                dec = Decoders.forSchema(enc, type, s == null ? "" : s.encoding(), data);
            } catch (DecodeException e) {
                if (sb.role == StreamRole.OTHER) {
                    kind = Kind.LOG_ONLY; // an undecodable side stream keeps its log times
                } else {
                    throw new IngestException(name, -1, "channel " + c.id() + " (" + c.topic() + ", " + type
                            + ") has role " + sb.role + " but cannot be decoded: " + e.getMessage(), e);
                }
            }
        }
        int dataField = 0;
        if (kind == Kind.TREE && sb.role == StreamRole.CAMERA) {
            if (dec instanceof io.flywheel.decode.protobuf.ProtobufDecoder pd) {
                com.google.protobuf.Descriptors.FieldDescriptor f = pd.descriptor().findFieldByName("data");
                if (f != null && !f.isRepeated() && f.getType() == com.google.protobuf.Descriptors.FieldDescriptor.Type.BYTES) {
                    kind = Kind.PROTOBUF_IMAGE;
                    dataField = f.getNumber();
                }
            } else if (enc.equals("json")) {
                kind = Kind.JSON_IMAGE;
            }
        }
        if (kind != Kind.LOG_ONLY && kind != Kind.TREE && kind != Kind.PROTOBUF_IMAGE && kind != Kind.JSON_IMAGE) {
            sb.hasHeader(true);
        }
        plans.put(c.id(), new Plan(sb, kind, dec, kind == Kind.CDR_IMAGE, dataField));
    }

    /** @return true when a ros2msg schema's first field is a std_msgs/Header */
    private static boolean headerFirst(Record.Schema s) {
        if (s == null || !s.encoding().equals("ros2msg")) return false;
        String text = StandardCharsets.UTF_8.decode(s.data().duplicate()).toString();
        for (String line : text.split("\n")) {
            String l = line.strip();
            int hash = l.indexOf('#');
            if (hash >= 0) l = l.substring(0, hash).strip();
            if (l.isEmpty()) continue;
            String t = l.split("\\s+")[0];
            return t.equals("std_msgs/Header") || t.equals("Header") || t.equals("std_msgs/msg/Header");
        }
        return false;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    /**
     * @param dataOffset offset of the message data's first byte: in the decompressed chunk when chunkOffset >= 0,
     *     else absolute
     * @param where offset to name in errors (the chunk's, or the message data's)
     */
    private void message(Record.Message m, long chunkOffset, String compression, long dataOffset, long where)
            throws IOException {
        Plan p = plans.get(m.channelId());
        if (p == null) {
            throw new IngestException(name, where, "message on channel " + m.channelId()
                    + ", which no Channel record before it defines");
        }
        StreamBuilder sb = p.stream;
        ByteBuffer data = m.data();
        try {
            switch (p.kind) {
                case CDR_COMPRESSED_IMAGE -> compressedImage(sb, m, data, chunkOffset, compression, dataOffset);
                case CDR_IMAGE -> image(sb, m, data, chunkOffset, compression, dataOffset);
                case CDR_JOINT_STATE -> jointState(sb, m, data);
                case CDR_HEADER -> sb.add(m.logTime(), CdrFastPaths.headerStamp(data));
                case LOG_ONLY -> sb.add(m.logTime(), 0);
                case TREE -> {
                    Object tree = p.decoder.decode(data);
                    if (Values.hasStamp(tree)) sb.hasHeader(true);
                    int i = sb.add(m.logTime(), Values.stamp(tree));
                    tree(sb, i, tree);
                }
                case PROTOBUF_IMAGE, JSON_IMAGE -> encodedImage(p, m, data, chunkOffset, compression, dataOffset);
            }
        } catch (DecodeException e) {
            throw new IngestException(name, chunkOffset >= 0 ? chunkOffset : where, "message on " + sb.topic + " ("
                    + sb.messageType + ")" + (chunkOffset >= 0 ? " at offset " + dataOffset + " of the decompressed chunk"
                    : "") + " does not decode: " + e.getMessage(), e);
        }
    }

    // One small method per kind keeps message() cheap for the JIT to compile (one huge method took C2 over a
    // second on one core, time taken from the ingest itself).

    private void compressedImage(StreamBuilder sb, Record.Message m, ByteBuffer data, long chunkOffset,
                                 String compression, long dataOffset) throws DecodeException {
        CdrFastPaths.CompressedImage ci = CdrFastPaths.compressedImage(data);
        long lay = CdrImageLayout.locate(data, false);
        int off = (int) (lay >>> 32);
        int len = (int) lay;
        if (len != ci.data().remaining()) throw new DecodeException("image payload length mismatch");
        int i = sb.add(m.logTime(), ci.stampNs());
        sb.locator(i, new RawLocator(uri, chunkOffset, dataOffset + off, len, compression,
                normaliseFormat(ci.format()), 0, 0));
    }

    private void image(StreamBuilder sb, Record.Message m, ByteBuffer data, long chunkOffset, String compression,
                       long dataOffset) throws DecodeException {
        CdrFastPaths.Image im = CdrFastPaths.image(data);
        long lay = CdrImageLayout.locate(data, true);
        int off = (int) (lay >>> 32);
        int len = (int) lay;
        if (len != im.data().remaining()) throw new DecodeException("image payload length mismatch");
        int i = sb.add(m.logTime(), im.stampNs());
        sb.locator(i, new RawLocator(uri, chunkOffset, dataOffset + off, len, compression, im.encoding(),
                im.width(), im.height()));
    }

    /**
     * A protobuf or JSON camera image (e.g. {@code foxglove.CompressedImage}): decoded for its timestamp and
     * format, and located without a copy. Protobuf: the wire format keeps a bytes field's value as is (protobuf
     * encoding guide, "Length-delimited records"), so the locator is the {@code data} field's value. JSON: the
     * {@code data} string holds base64 (Foxglove's JSON encoding of bytes); the locator is the string's contents
     * with payload {@code base64}, or the whole message with payload {@code json:data} when the string has escapes.
     */
    private void encodedImage(Plan p, Record.Message m, ByteBuffer data, long chunkOffset, String compression,
                              long dataOffset) throws DecodeException {
        StreamBuilder sb = p.stream;
        Object tree = p.decoder.decode(data);
        if (Values.hasStamp(tree)) sb.hasHeader(true);
        int i = sb.add(m.logTime(), Values.stamp(tree));
        String format = "";
        int w = 0;
        int h = 0;
        if (tree instanceof Map<?, ?> t) {
            Object f = t.containsKey("format") ? t.get("format") : t.get("encoding");
            format = t.containsKey("format") ? normaliseFormat(String.valueOf(f)) : f == null ? "" : String.valueOf(f);
            w = t.get("width") instanceof Number x ? x.intValue() : 0;
            h = t.get("height") instanceof Number x ? x.intValue() : 0;
        }
        long loc = p.kind == Kind.PROTOBUF_IMAGE ? EncodedImageLayout.protobufField(data, p.dataField)
                : EncodedImageLayout.jsonString(data, "data");
        if (loc == EncodedImageLayout.NOT_FOUND) {
            return; // no data field in this message: times only
        }
        String payload = "";
        int off;
        int len;
        if (loc == EncodedImageLayout.ESCAPED) {
            off = 0;
            len = data.remaining();
            payload = "json:data";
        } else {
            off = (int) (loc >>> 32);
            len = (int) loc;
            payload = p.kind == Kind.JSON_IMAGE ? "base64" : "";
        }
        sb.locator(i, new RawLocator(uri, chunkOffset, dataOffset + off, len, compression, format, w, h, payload));
    }

    private static void jointState(StreamBuilder sb, Record.Message m, ByteBuffer data) throws DecodeException {
        CdrFastPaths.JointState js = CdrFastPaths.jointState(data);
        int i = sb.add(m.logTime(), js.stampNs());
        if (sb.role == StreamRole.GRIPPER) {
            sb.value(i, js.position().length == 0 ? new double[0] : new double[] {js.position()[0]});
        } else {
            sb.value(i, js.position());
            if (js.names().size() == js.position().length) sb.names(js.names());
        }
    }

    /** Stores the role-specific content of a decoded tree (shared with the ROS 1 reader). */
    static void tree(StreamBuilder sb, int i, Object tree) {
        switch (sb.role) {
            case STATE, ACTION, OTHER -> {
                Values.Vector v = Values.vector(tree, sb.messageType);
                if (sb.role != StreamRole.OTHER || v.values().length > 0) {
                    sb.value(i, v.values());
                    sb.names(v.names());
                }
            }
            case GRIPPER -> {
                Values.Vector v = Values.vector(tree, sb.messageType);
                sb.value(i, v.values().length == 0 ? new double[0] : new double[] {v.values()[0]});
            }
            case TASK, OUTCOME -> sb.text(i, Values.text(tree));
            case CAMERA -> { } // images: located by their readers (CDR, protobuf, JSON, ROS 1), no values
        }
    }

    static String normaliseFormat(String f) {
        String s = f == null ? "" : f.trim().toLowerCase(java.util.Locale.ROOT);
        if (s.equals("jpg") || s.equals("jpeg") || s.endsWith("jpeg compressed bgr8") || s.contains("jpeg")) return "jpeg";
        if (s.contains("png")) return "png";
        return s;
    }
}
