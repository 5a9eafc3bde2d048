package io.flywheel.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.CRC32;

import com.github.luben.zstd.ZstdDecompressCtx;

import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.MessageView;
import io.flywheel.mcap.Record;
import io.flywheel.mcap.RecordParser;
import io.flywheel.ros.cdr.CdrFastPaths;

/**
 * MCAP read + decode throughput on one file, in one JVM, single-threaded. Modes (all modes take
 * turns: {@code --warmup} untimed rounds, then {@code --runs} timed rounds; the median of each
 * mode's runs is reported):
 * <ul>
 *   <li>{@code indexed-generic}: {@link McapIndexedReader} over every message in log-time order,
 *       chunk CRCs checked, each message decoded into the generic tree by
 *       {@link io.flywheel.ros.cdr.CdrDecoder} (image bytes copied into a {@code byte[]}): the work the
 *       Node peer's {@code indexed-all} does with {@code @mcap/core} + {@code rosmsg2-serialization};</li>
 *   <li>{@code indexed-fast}: the same reader, with {@link CdrFastPaths} for CompressedImage and
 *       JointState (image bytes stay a view into the chunk) and the generic tree for the rest;</li>
 *   <li>both read with {@code ReadOptions.reuseBuffers(true)} (decompressed chunk arrays recycled;
 *       every message is used before the next one is read, as in the peer's loop);
 *       {@code indexed-generic-fresh} and {@code indexed-fast-fresh} are the same with the default
 *       options (a new array per chunk);</li>
 *   <li>{@code indexed-none}: the indexed reader (buffers reused) over every message, no decoding
 *       (the peer's {@code indexed-none});</li>
 *   <li>{@code stream}: {@link McapStreamReader} front to back, CRCs checked (chunk CRCs and the
 *       data-section CRC), messages counted, not decoded;</li>
 *   <li>{@code zstd}: the in-process limit: every chunk's compressed payload preloaded in memory,
 *       decompressed by zstd-jni into one reused array, and the CRC-32 of the output checked.</li>
 * </ul>
 * MB/s counts 1e6 bytes of the file (the whole file, for every mode), so the numbers compare
 * directly with each other and with the peer's. Prints one JSON line per mode.
 *
 * <pre>McapReadBench FILE [--modes indexed-generic,indexed-fast,stream,zstd] [--runs 5] [--warmup 2] [--label L]</pre>
 */
public final class McapReadBench {
    private McapReadBench() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = McapBenchFile.Args.parse(args);
        String positional = a.get("_");
        if (positional == null) {
            System.err.println("usage: McapReadBench FILE [--modes indexed-generic,indexed-fast,stream,zstd] "
                    + "[--runs 5] [--warmup 2] [--label L]");
            System.exit(2);
        }
        Path file = Path.of(positional.split("\0")[0]);
        List<String> modes = Arrays.asList(a.getOrDefault("modes", "indexed-generic,indexed-fast,indexed-fast-fresh,indexed-none,stream,zstd").split(","));
        int runs = Integer.parseInt(a.getOrDefault("runs", "5"));
        int warmup = Integer.parseInt(a.getOrDefault("warmup", "2"));
        String label = a.getOrDefault("label", "");
        long fileBytes = Files.size(file);
        Map<String, Pass> passes = new java.util.LinkedHashMap<>();
        for (String mode : modes) {
            passes.put(mode, switch (mode) {
                case "indexed-generic" -> () -> indexed(file, false, true);
                case "indexed-fast" -> () -> indexed(file, true, true);
                case "indexed-generic-fresh" -> () -> indexed(file, false, false);
                case "indexed-fast-fresh" -> () -> indexed(file, true, false);
                case "indexed-none" -> () -> indexedNone(file);
                case "stream" -> () -> stream(file);
                case "zstd" -> zstdPass(file);
                default -> throw new IllegalArgumentException("unknown mode " + mode);
            });
        }
        // Modes take turns (round-robin), so that the noise of a shared machine falls on all of them alike.
        Map<String, Result> last = new HashMap<>();
        Map<String, double[]> secs = new HashMap<>();
        for (int i = 0; i < warmup; i++) {
            for (Map.Entry<String, Pass> e : passes.entrySet()) {
                last.put(e.getKey(), e.getValue().run());
            }
        }
        for (int i = 0; i < runs; i++) {
            for (Map.Entry<String, Pass> e : passes.entrySet()) {
                long t0 = System.nanoTime();
                last.put(e.getKey(), e.getValue().run());
                secs.computeIfAbsent(e.getKey(), k -> new double[runs])[i] = (System.nanoTime() - t0) / 1e9;
            }
        }
        for (String mode : passes.keySet()) {
            double[] sorted = secs.get(mode).clone();
            Arrays.sort(sorted);
            double median = runs % 2 == 1 ? sorted[runs / 2] : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2;
            Result res = last.get(mode);
            StringBuilder j = new StringBuilder("{\"impl\":\"flywheel-java\"");
            j.append(",\"mode\":\"").append(mode).append('"');
            if (!label.isEmpty()) {
                j.append(",\"label\":").append(McapBenchFile.Json.str(label));
            }
            j.append(",\"file\":").append(McapBenchFile.Json.str(file.toString()))
                    .append(",\"fileBytes\":").append(fileBytes)
                    .append(",\"validateCrcs\":true")
                    .append(",\"runs\":").append(runs).append(",\"warmup\":").append(warmup)
                    .append(",\"seconds\":").append(fmt(median, 4))
                    .append(",\"MBps\":").append(fmt(fileBytes / 1e6 / median, 1));
            if (res.messages > 0) {
                j.append(",\"messages\":").append(res.messages)
                        .append(",\"msgsPerSec\":").append(Math.round(res.messages / median));
            }
            j.append(",\"checksum\":").append(fmt(res.checksum, 3));
            res.extra.forEach((k, v) -> j.append(",\"").append(k).append("\":").append(v));
            j.append(",\"allSeconds\":[");
            double[] all = secs.get(mode);
            for (int i = 0; i < runs; i++) {
                j.append(i == 0 ? "" : ",").append(fmt(all[i], 4));
            }
            j.append("]}");
            System.out.println(j);
        }
        System.out.flush();
    }

    private static String fmt(double v, int digits) {
        return String.format(Locale.ROOT, "%." + digits + "f", v);
    }

    @FunctionalInterface
    private interface Pass {
        Result run() throws Exception;
    }

    /** What one pass saw: messages, a checksum of decoded values (so nothing is optimized away), extras. */
    private static final class Result {
        long messages;
        double checksum;
        final Map<String, String> extra = new java.util.LinkedHashMap<>();
    }

    private enum Kind { IMAGE, JOINT, OTHER }

    private record ChannelDecoder(Kind kind, MessageDecoder decoder) {}

    // ------------------------------------------------------------------ indexed

    @SuppressWarnings("unchecked")
    private static Result indexed(Path file, boolean fast, boolean reuse) throws Exception {
        Result res = new Result();
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            Map<Integer, ChannelDecoder> decoders = new HashMap<>();
            for (Record.Channel ch : r.channels().values()) {
                Record.Schema s = r.schemas().get(ch.schemaId());
                ByteBuffer d = s.data().duplicate();
                byte[] schemaBytes = new byte[d.remaining()];
                d.get(schemaBytes);
                Kind kind = s.name().endsWith("CompressedImage") ? Kind.IMAGE
                        : s.name().endsWith("JointState") ? Kind.JOINT : Kind.OTHER;
                decoders.put(ch.id(), new ChannelDecoder(kind,
                        Decoders.forSchema(ch.messageEncoding(), s.name(), s.encoding(), schemaBytes)));
            }
            double checksum = 0;
            long n = 0;
            McapIndexedReader.MessageIterator it = r.messages(
                    McapIndexedReader.ReadOptions.builder().reuseBuffers(reuse).build());
            while (it.hasNext()) {
                MessageView m = it.next();
                n++;
                ChannelDecoder cd = decoders.get(m.channel().id());
                ByteBuffer data = m.message().data();
                if (fast && cd.kind == Kind.IMAGE) {
                    CdrFastPaths.CompressedImage img = CdrFastPaths.compressedImage(data);
                    ByteBuffer b = img.data();
                    int len = b.remaining();
                    checksum += len + (b.get(b.position() + (len >> 1)) & 0xFF) + img.stampNs() % 1_000_000_000L;
                } else if (fast && cd.kind == Kind.JOINT) {
                    CdrFastPaths.JointState js = CdrFastPaths.jointState(data);
                    checksum += js.position()[3] + js.velocity()[15] + js.effort()[0] + js.names().size();
                } else {
                    Map<String, Object> t = (Map<String, Object>) cd.decoder.decode(data);
                    switch (cd.kind) {
                        case IMAGE -> {
                            byte[] img = (byte[]) t.get("data");
                            Map<String, Object> stamp = (Map<String, Object>) ((Map<String, Object>) t.get("header")).get("stamp");
                            checksum += img.length + (img[img.length >> 1] & 0xFF) + ((Number) stamp.get("nanosec")).longValue();
                        }
                        case JOINT -> checksum += (Double) ((List<Object>) t.get("position")).get(3)
                                + (Double) ((List<Object>) t.get("velocity")).get(15)
                                + (Double) ((List<Object>) t.get("effort")).get(0)
                                + ((List<Object>) t.get("name")).size();
                        default -> {
                            Object d = t.get("data");
                            if (d instanceof List<?> l && l.size() > 13) {
                                checksum += ((Number) l.get(13)).doubleValue();
                            }
                        }
                    }
                }
            }
            res.messages = n;
            res.checksum = checksum;
            res.extra.put("chunksRead", String.valueOf(it.chunksRead()));
            res.extra.put("reuseBuffers", String.valueOf(reuse));
        }
        return res;
    }

    /** Every message through the indexed reader (CRCs checked, buffers reused), not decoded. */
    private static Result indexedNone(Path file) throws Exception {
        Result res = new Result();
        long dataBytes = 0;
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            McapIndexedReader.MessageIterator it = r.messages(
                    McapIndexedReader.ReadOptions.builder().reuseBuffers(true).build());
            while (it.hasNext()) {
                dataBytes += it.next().message().data().remaining();
                res.messages++;
            }
        }
        res.checksum = dataBytes;
        res.extra.put("reuseBuffers", "true");
        return res;
    }

    // ------------------------------------------------------------------ stream

    private static Result stream(Path file) throws IOException {
        Result res = new Result();
        long dataBytes = 0;
        try (McapStreamReader r = McapStreamReader.open(file)) {
            for (Record rec; (rec = r.next()) != null; ) {
                if (rec instanceof Record.Message m) {
                    res.messages++;
                    dataBytes += m.data().remaining();
                }
            }
        }
        res.checksum = dataBytes;
        return res;
    }

    // ------------------------------------------------------------------ zstd limit

    /** Preloads every chunk's compressed payload, then times zstd-jni decompression + CRC-32 of the output. */
    private static Pass zstdPass(Path file) throws IOException {
        List<byte[]> payloads = new ArrayList<>();
        List<long[]> meta = new ArrayList<>(); // {uncompressedSize, crc}
        long compressed = 0;
        long uncompressed = 0;
        int max = 0;
        try (McapIndexedReader r = McapIndexedReader.open(file);
             var ch = java.nio.channels.FileChannel.open(file)) {
            for (Record.ChunkIndex ci : r.chunkIndexes()) {
                if (!ci.compression().equals("zstd")) {
                    throw new IOException(file + ": chunk at " + ci.chunkStartOffset() + " is not zstd; the zstd limit "
                            + "needs a zstd file");
                }
                ByteBuffer rec = ByteBuffer.allocate((int) ci.chunkLength());
                while (rec.hasRemaining()) {
                    if (ch.read(rec, ci.chunkStartOffset() + rec.position()) < 0) {
                        throw new IOException(file + ": ends inside the chunk at " + ci.chunkStartOffset());
                    }
                }
                rec.flip();
                Record.Chunk c = (Record.Chunk) RecordParser.parse(Record.OP_CHUNK, rec.position(9), file.toString(),
                        ci.chunkStartOffset());
                byte[] p = new byte[c.records().remaining()];
                c.records().duplicate().get(p);
                payloads.add(p);
                meta.add(new long[] {c.uncompressedSize(), c.uncompressedCrc()});
                compressed += p.length;
                uncompressed += c.uncompressedSize();
                max = Math.max(max, (int) c.uncompressedSize());
            }
        }
        final byte[] dst = new byte[max];
        final long comp = compressed;
        final long uncomp = uncompressed;
        ZstdDecompressCtx ctx = new ZstdDecompressCtx();
        CRC32 crc = new CRC32();
        return () -> {
            Result res = new Result();
            long out = 0;
            for (int i = 0; i < payloads.size(); i++) {
                byte[] p = payloads.get(i);
                int n = ctx.decompressByteArray(dst, 0, dst.length, p, 0, p.length);
                long[] m = meta.get(i);
                if (n != m[0]) {
                    throw new IOException("chunk " + i + " decompressed to " + n + " bytes, expected " + m[0]);
                }
                crc.reset();
                crc.update(dst, 0, n);
                if (m[1] != 0 && crc.getValue() != m[1]) {
                    throw new IOException("chunk " + i + " CRC mismatch");
                }
                out += n;
            }
            res.checksum = out;
            res.extra.put("chunks", String.valueOf(payloads.size()));
            res.extra.put("compressedBytes", String.valueOf(comp));
            res.extra.put("uncompressedBytes", String.valueOf(uncomp));
            return res;
        };
    }
}
