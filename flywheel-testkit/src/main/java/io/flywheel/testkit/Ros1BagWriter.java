package io.flywheel.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream;

import net.jpountz.lz4.LZ4FrameOutputStream;

/**
 * A small ROS 1 bag (format 2.0, ROS wiki "Bags/Format/2.0") writer for tests: no such file with images exists
 * in the shared data (the ROS 1 fixtures are turtlesim recordings). Writes the bag header record padded to 4096
 * bytes, chunk records of a fixed number of messages (each chunk holding the connection records first), index
 * data records after each chunk, and the index section (connections, chunk infos). Compression: {@code none},
 * {@code bz2} (commons-compress) or {@code lz4} (LZ4 frame with independent blocks, as roslz4 writes).
 */
public final class Ros1BagWriter {
    /** A connection: id, topic, type and message definition. */
    public record Conn(int id, String topic, String type, String definition) {}

    private record Msg(int conn, long timeNs, byte[] data) {}

    private final List<Conn> conns = new ArrayList<>();
    private final List<Msg> msgs = new ArrayList<>();

    /** Adds a connection; @return its id */
    public int connection(String topic, String type, String definition) {
        conns.add(new Conn(conns.size(), topic, type, definition));
        return conns.size() - 1;
    }

    /** Adds a message (written in the order added). */
    public void message(int conn, long timeNs, byte[] data) {
        msgs.add(new Msg(conn, timeNs, data));
    }

    /** Writes the bag with {@code perChunk} messages per chunk. */
    public void write(Path file, String compression, int perChunk) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write("#ROSBAG V2.0\n".getBytes(StandardCharsets.US_ASCII));
        int headerAt = out.size();
        out.write(new byte[4096]); // placeholder for the bag header record
        List<byte[]> chunkInfos = new ArrayList<>();
        for (int from = 0; from < msgs.size(); from += perChunk) {
            List<Msg> part = msgs.subList(from, Math.min(msgs.size(), from + perChunk));
            ByteArrayOutputStream inner = new ByteArrayOutputStream();
            for (Conn c : conns) {
                record(inner, connectionHeader(c), connectionData(c));
            }
            Map<Integer, List<long[]>> index = new LinkedHashMap<>();
            long start = Long.MAX_VALUE;
            long end = Long.MIN_VALUE;
            for (Msg m : part) {
                index.computeIfAbsent(m.conn, k -> new ArrayList<>()).add(new long[] {m.timeNs, inner.size()});
                record(inner, fields(field("op", new byte[] {0x02}), field("conn", u32(m.conn)), field("time", time(m.timeNs))),
                        m.data);
                start = Math.min(start, m.timeNs);
                end = Math.max(end, m.timeNs);
            }
            byte[] raw = inner.toByteArray();
            long chunkPos = out.size();
            record(out, fields(field("op", new byte[] {0x05}), field("compression", compression.getBytes(StandardCharsets.US_ASCII)),
                    field("size", u32(raw.length))), compress(raw, compression));
            ByteArrayOutputStream counts = new ByteArrayOutputStream();
            for (Map.Entry<Integer, List<long[]>> e : index.entrySet()) {
                ByteArrayOutputStream d = new ByteArrayOutputStream();
                for (long[] x : e.getValue()) {
                    d.write(time(x[0]));
                    d.write(u32((int) x[1]));
                }
                record(out, fields(field("op", new byte[] {0x04}), field("ver", u32(1)), field("conn", u32(e.getKey())),
                        field("count", u32(e.getValue().size()))), d.toByteArray());
                counts.write(u32(e.getKey()));
                counts.write(u32(e.getValue().size()));
            }
            ByteArrayOutputStream info = new ByteArrayOutputStream();
            record(info, fields(field("op", new byte[] {0x06}), field("ver", u32(1)), field("chunk_pos", u64(chunkPos)),
                    field("start_time", time(start)), field("end_time", time(end)), field("count", u32(index.size()))),
                    counts.toByteArray());
            chunkInfos.add(info.toByteArray());
        }
        long indexPos = out.size();
        for (Conn c : conns) {
            record(out, connectionHeader(c), connectionData(c));
        }
        for (byte[] ci : chunkInfos) {
            out.write(ci);
        }
        byte[] bytes = out.toByteArray();
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        byte[] hf = fields(field("op", new byte[] {0x03}), field("index_pos", u64(indexPos)),
                field("conn_count", u32(conns.size())), field("chunk_count", u32(chunkInfos.size())));
        record(h, hf, new byte[4096 - 4 - hf.length - 4]);
        System.arraycopy(h.toByteArray(), 0, bytes, headerAt, 4096);
        Files.write(file, bytes);
    }

    private static byte[] connectionHeader(Conn c) throws IOException {
        return fields(field("op", new byte[] {0x07}), field("conn", u32(c.id)), field("topic", utf8(c.topic)));
    }

    private static byte[] connectionData(Conn c) throws IOException {
        return fields(field("topic", utf8(c.topic)), field("type", utf8(c.type)), field("md5sum", utf8("*")),
                field("message_definition", utf8(c.definition)));
    }

    private static byte[] compress(byte[] raw, String compression) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        switch (compression) {
            case "none" -> b.write(raw);
            case "bz2" -> {
                try (OutputStream o = new BZip2CompressorOutputStream(b)) {
                    o.write(raw);
                }
            }
            case "lz4" -> {
                try (OutputStream o = new LZ4FrameOutputStream(b, LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
                        LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE)) {
                    o.write(raw);
                }
            }
            default -> throw new IllegalArgumentException(compression);
        }
        return b.toByteArray();
    }

    private static void record(OutputStream out, byte[] header, byte[] data) throws IOException {
        out.write(u32(header.length));
        out.write(header);
        out.write(u32(data.length));
        out.write(data);
    }

    private static byte[] field(String name, byte[] value) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] n = (name + "=").getBytes(StandardCharsets.US_ASCII);
        b.write(u32(n.length + value.length));
        b.write(n);
        b.write(value);
        return b.toByteArray();
    }

    private static byte[] fields(byte[]... f) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] x : f) {
            b.write(x);
        }
        return b.toByteArray();
    }

    /** @return UTF-8 bytes */
    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** @return uint32 little-endian */
    public static byte[] u32(int v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array();
    }

    /** @return uint64 little-endian */
    public static byte[] u64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    /** @return a ROS 1 time (uint32 sec, uint32 nsec, little-endian) */
    public static byte[] time(long ns) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt((int) (ns / 1_000_000_000L))
                .putInt((int) (ns % 1_000_000_000L)).array();
    }
}
