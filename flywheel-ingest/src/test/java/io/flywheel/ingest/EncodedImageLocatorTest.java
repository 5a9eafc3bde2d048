package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.TimestampProto;

import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.mcap.McapWriter;
import io.flywheel.ros.ros1.Ros1Decoder;
import io.flywheel.testkit.Ros1BagWriter;
import io.flywheel.testkit.SharedData;

/**
 * Raw image locators for ROS 1 bags (chunks stored, bz2, lz4) and for protobuf / JSON {@code foxglove.CompressedImage}
 * channels in MCAP: every locator reads back exactly the image bytes written, which are also the bytes the message
 * decoder yields. The shared ROS 1 bags are turtlesim recordings without images, so the bags are written here.
 */
class EncodedImageLocatorTest {
    private static final String HEADER_DEF = "================================================================================\n"
            + "MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
    private static final String COMPRESSED_DEF = "Header header\nstring format\nuint8[] data\n" + HEADER_DEF;
    private static final String IMAGE_DEF = "Header header\nuint32 height\nuint32 width\nstring encoding\n"
            + "uint8 is_bigendian\nuint32 step\nuint8[] data\n" + HEADER_DEF;
    private static final long T0 = 1_700_000_000_000_000_000L;

    private static byte[] jpeg(int k) {
        byte[] b = new byte[200 + 53 * k];
        b[0] = (byte) 0xFF;
        b[1] = (byte) 0xD8;
        for (int i = 2; i < b.length; i++) {
            b[i] = (byte) (i * 29 + 11 * k);
        }
        return b;
    }

    /** ROS 1 serialization: little-endian, strings and arrays as uint32 length + bytes, no padding. */
    private static final class Ros1 {
        final ByteArrayOutputStream b = new ByteArrayOutputStream();

        Ros1 u32(int v) {
            b.writeBytes(Ros1BagWriter.u32(v));
            return this;
        }

        Ros1 u8(int v) {
            b.write(v);
            return this;
        }

        Ros1 header(int seq, long t, String frame) {
            u32(seq);
            b.writeBytes(Ros1BagWriter.time(t));
            return string(frame);
        }

        Ros1 string(String s) {
            return bytes(s.getBytes(StandardCharsets.UTF_8));
        }

        Ros1 bytes(byte[] x) {
            u32(x.length);
            b.writeBytes(x);
            return this;
        }
    }

    @Test
    void theSharedRos1BagsHoldNoCameraImages() throws Exception {
        for (String f : List.of("example.bag", "example-lz4.bag", "example-bz2.bag")) {
            Recording r = Ingest.read(SharedData.data("ros1-bag/" + f));
            for (Episode e : r.episodes()) {
                assertTrue(e.streams().stream().noneMatch(s -> s.role() == StreamRole.CAMERA), f + " has a camera stream");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "bz2", "lz4"})
    void ros1BagImageLocatorsReadBackTheBytesTheDecoderYields(String compression, @TempDir Path tmp) throws Exception {
        Ros1BagWriter w = new Ros1BagWriter();
        int cc = w.connection("/front/image/compressed", "sensor_msgs/CompressedImage", COMPRESSED_DEF);
        int ci = w.connection("/depth/image", "sensor_msgs/Image", IMAGE_DEF);
        int n = 8;
        byte[][] jpegs = new byte[n][];
        byte[][] raws = new byte[n][];
        byte[][] msgsC = new byte[n][];
        byte[][] msgsI = new byte[n][];
        for (int k = 0; k < n; k++) {
            long t = T0 + k * 100_000_000L;
            jpegs[k] = jpeg(k);
            msgsC[k] = new Ros1().header(k, t, "cam" + "x".repeat(k)).string(k % 2 == 0 ? "jpeg" : "JPG")
                    .bytes(jpegs[k]).b.toByteArray();
            w.message(cc, t + 1_000, msgsC[k]);
            int width = 3 + k;
            raws[k] = new byte[width * 2];
            for (int i = 0; i < raws[k].length; i++) {
                raws[k][i] = (byte) (5 * i + k);
            }
            msgsI[k] = new Ros1().header(k, t + 500, "d").u32(2).u32(width).string("mono8").u8(0).u32(width)
                    .bytes(raws[k]).b.toByteArray();
            w.message(ci, t + 2_000, msgsI[k]);
        }
        Path bag = tmp.resolve("images-" + compression + ".bag");
        w.write(bag, compression, 5); // 16 messages in 4 chunks
        Recording r = Ingest.read(bag);
        Episode ep = r.episodes().get(0);
        StreamData c = ep.stream("/front/image/compressed").orElseThrow();
        StreamData d = ep.stream("/depth/image").orElseThrow();
        assertEquals(StreamRole.CAMERA, c.role());
        assertEquals(n, c.size());
        MessageDecoder decC = Ros1Decoder.forDefinition("sensor_msgs/CompressedImage", COMPRESSED_DEF);
        MessageDecoder decI = Ros1Decoder.forDefinition("sensor_msgs/Image", IMAGE_DEF);
        java.util.Set<Long> chunks = new java.util.HashSet<>();
        try (LocatorReader lr = new LocatorReader()) {
            for (int k = 0; k < n; k++) {
                RawLocator lc = c.locators()[k];
                RawLocator ld = d.locators()[k];
                assertEquals(compression.equals("none"), lc.isPlainRange(), lc.toString());
                assertEquals(compression.equals("none") ? "" : compression, lc.compression());
                assertEquals("jpeg", lc.format());
                assertEquals("mono8", ld.format());
                assertEquals(3 + k, ld.width());
                assertEquals(2, ld.height());
                byte[] decoded = (byte[]) ((Map<?, ?>) decC.decode(ByteBuffer.wrap(msgsC[k]))).get("data");
                assertArrayEquals(decoded, lr.read(lc), "compressed image " + k);
                assertArrayEquals(jpegs[k], lr.read(lc));
                byte[] decodedRaw = (byte[]) ((Map<?, ?>) decI.decode(ByteBuffer.wrap(msgsI[k]))).get("data");
                assertArrayEquals(decodedRaw, lr.read(ld), "raw image " + k);
                assertArrayEquals(raws[k], lr.read(ld));
                assertEquals(T0 + k * 100_000_000L, c.timeNs()[k], "header stamp");
                chunks.add(lc.chunkOffset());
                chunks.add(ld.chunkOffset());
            }
        }
        if (!compression.equals("none")) {
            assertEquals(4, chunks.size(), "images from all 4 chunks (16 messages, 5 per chunk): " + chunks);
            RawLocator bad = new RawLocator(c.locators()[0].uri(), c.locators()[0].chunkOffset() + 1, 0, 10, compression,
                    "jpeg", 0, 0);
            try (LocatorReader lr = new LocatorReader()) {
                IngestException e = assertThrows(IngestException.class, () -> lr.read(bad));
                assertTrue(e.getMessage().contains(bag.getFileName().toString()), e.getMessage());
            }
        }
    }

    private static Descriptors.Descriptor compressedImageDescriptor() throws Exception {
        DescriptorProtos.FileDescriptorProto file = DescriptorProtos.FileDescriptorProto.newBuilder()
                .setName("foxglove/CompressedImage.proto").setPackage("foxglove").setSyntax("proto3")
                .addDependency("google/protobuf/timestamp.proto")
                .addMessageType(DescriptorProtos.DescriptorProto.newBuilder().setName("CompressedImage")
                        .addField(field("timestamp", 1, DescriptorProtos.FieldDescriptorProto.Type.TYPE_MESSAGE)
                                .setTypeName(".google.protobuf.Timestamp"))
                        .addField(field("frame_id", 4, DescriptorProtos.FieldDescriptorProto.Type.TYPE_STRING))
                        .addField(field("data", 2, DescriptorProtos.FieldDescriptorProto.Type.TYPE_BYTES))
                        .addField(field("format", 3, DescriptorProtos.FieldDescriptorProto.Type.TYPE_STRING)))
                .build();
        return Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[] {TimestampProto.getDescriptor()})
                .findMessageTypeByName("CompressedImage");
    }

    private static DescriptorProtos.FieldDescriptorProto.Builder field(String name, int number,
                                                                       DescriptorProtos.FieldDescriptorProto.Type type) {
        return DescriptorProtos.FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(DescriptorProtos.FieldDescriptorProto.Label.LABEL_OPTIONAL);
    }

    private static final String JSON_SCHEMA = """
            {"type": "object", "properties": {
              "timestamp": {"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}},
              "frame_id": {"type": "string"},
              "data": {"type": "string", "contentEncoding": "base64"},
              "format": {"type": "string"}}}""";

    @ParameterizedTest
    @CsvSource({"false,NONE", "true,NONE", "true,ZSTD", "true,LZ4"})
    void protobufAndJsonCompressedImageLocatorsReadBackTheBytesTheDecoderYields(boolean chunked,
            McapWriter.Compression compression, @TempDir Path tmp) throws Exception {
        Descriptors.Descriptor desc = compressedImageDescriptor();
        byte[] descriptorSet = DescriptorProtos.FileDescriptorSet.newBuilder()
                .addFile(TimestampProto.getDescriptor().toProto()).addFile(desc.getFile().toProto()).build().toByteArray();
        Path file = tmp.resolve("foxglove.mcap");
        int n = 6;
        byte[][] jpegs = new byte[n][];
        byte[][] proto = new byte[n][];
        byte[][] json = new byte[n][];
        try (McapWriter w = McapWriter.builder().compression(compression).useChunks(chunked).chunkSize(1500).build(file)) {
            int sp = w.registerSchema("foxglove.CompressedImage", "protobuf", descriptorSet);
            int sj = w.registerSchema("foxglove.CompressedImage", "jsonschema", JSON_SCHEMA.getBytes(StandardCharsets.UTF_8));
            int cp = w.registerChannel("/proto/image", "protobuf", sp, Map.of());
            int cj = w.registerChannel("/json/image", "json", sj, Map.of());
            for (int k = 0; k < n; k++) {
                long t = T0 + k * 50_000_000L;
                jpegs[k] = jpeg(k);
                DynamicMessage.Builder b = DynamicMessage.newBuilder(desc);
                Descriptors.Descriptor ts = desc.findFieldByName("timestamp").getMessageType();
                b.setField(desc.findFieldByName("timestamp"), DynamicMessage.newBuilder(ts)
                        .setField(ts.findFieldByName("seconds"), t / 1_000_000_000L)
                        .setField(ts.findFieldByName("nanos"), (int) (t % 1_000_000_000L)).build());
                b.setField(desc.findFieldByName("frame_id"), "cam");
                b.setField(desc.findFieldByName("data"), ByteString.copyFrom(jpegs[k]));
                b.setField(desc.findFieldByName("format"), "jpeg");
                proto[k] = b.build().toByteArray();
                w.writeMessage(cp, k, t + 3_000, t + 3_000, proto[k]);
                String b64 = Base64.getEncoder().encodeToString(jpegs[k]);
                if (k % 3 == 2) {
                    b64 = b64.replace("/", "\\/"); // a legal JSON escape: the string's bytes are no longer base64
                }
                json[k] = ("{\"timestamp\": {\"sec\": " + t / 1_000_000_000L + ", \"nsec\": " + t % 1_000_000_000L
                        + "}, \"frame_id\": \"c\\\"am\", \"data\": \"" + b64 + "\", \"format\": \"jpeg\"}")
                        .getBytes(StandardCharsets.UTF_8);
                w.writeMessage(cj, k, t + 4_000, t + 4_000, json[k]);
            }
        }
        Episode ep = Ingest.read(file).episodes().get(0);
        StreamData p = ep.stream("/proto/image").orElseThrow();
        StreamData j = ep.stream("/json/image").orElseThrow();
        assertEquals(StreamRole.CAMERA, p.role());
        assertEquals(StreamRole.CAMERA, j.role());
        MessageDecoder decP = Decoders.forSchema("protobuf", "foxglove.CompressedImage", "protobuf", descriptorSet);
        MessageDecoder decJ = Decoders.forSchema("json", "foxglove.CompressedImage", "jsonschema",
                JSON_SCHEMA.getBytes(StandardCharsets.UTF_8));
        boolean plain = !chunked || compression == McapWriter.Compression.NONE;
        int escaped = 0;
        try (LocatorReader lr = new LocatorReader()) {
            for (int k = 0; k < n; k++) {
                long t = T0 + k * 50_000_000L;
                RawLocator lp = p.locators()[k];
                RawLocator lj = j.locators()[k];
                assertEquals(plain, lp.isPlainRange());
                assertEquals("", lp.payload(), "protobuf keeps the bytes as they are");
                assertEquals(jpegs[k].length, lp.length());
                assertEquals("jpeg", lp.format());
                byte[] fromDecoder = (byte[]) ((Map<?, ?>) decP.decode(ByteBuffer.wrap(proto[k]))).get("data");
                assertArrayEquals(fromDecoder, lr.read(lp), "protobuf image " + k);
                assertArrayEquals(jpegs[k], lr.read(lp));
                assertEquals(t, p.timeNs()[k], "google.protobuf.Timestamp is the stamp");

                assertEquals(k % 3 == 2 ? "json:data" : "base64", lj.payload(), "json image " + k);
                escaped += k % 3 == 2 ? 1 : 0;
                if (k % 3 != 2) {
                    assertEquals(Base64.getEncoder().encodeToString(jpegs[k]).length(), lj.length(), "the base64 text");
                } else {
                    assertEquals(json[k].length, lj.length(), "the whole message");
                }
                byte[] fromJson = (byte[]) ((Map<?, ?>) decJ.decode(ByteBuffer.wrap(json[k]))).get("data");
                assertArrayEquals(fromJson, lr.read(lj), "json image " + k);
                assertArrayEquals(jpegs[k], lr.read(lj));
                assertEquals(t, j.timeNs()[k]);
                RawLocator stored = RawLocator.fromStored(lj.uri(), lj.chunkOffset(), lj.offset(), lj.length(),
                        lj.storedCompression());
                assertArrayEquals(jpegs[k], lr.read(stored), "through the lake's compression column");
            }
        }
        assertEquals(2, escaped);
    }

    @Test
    void layoutScannersFindTheFieldAndRejectBrokenInput() throws Exception {
        ByteBuffer j = ByteBuffer.wrap("{\"a\": [1, {\"data\": \"no\"}], \"b\": \"x\\\"y\", \"data\": \"QUJD\"}"
                .getBytes(StandardCharsets.US_ASCII));
        long at = EncodedImageLayout.jsonString(j, "data");
        assertEquals("QUJD", new String(j.array(), (int) (at >>> 32), (int) at, StandardCharsets.US_ASCII),
                "the top-level member, not the nested one");
        assertEquals(EncodedImageLayout.NOT_FOUND, EncodedImageLayout.jsonString(
                ByteBuffer.wrap("{\"x\": 1}".getBytes(StandardCharsets.US_ASCII)), "data"));
        assertThrows(io.flywheel.decode.DecodeException.class, () -> EncodedImageLayout.jsonString(
                ByteBuffer.wrap("{\"data\": \"QUJ".getBytes(StandardCharsets.US_ASCII)), "data"));
        // field 2, length 5 declared but only 2 bytes follow
        assertThrows(io.flywheel.decode.DecodeException.class, () -> EncodedImageLayout.protobufField(
                ByteBuffer.wrap(new byte[] {0x12, 0x05, 1, 2}), 2));
        // field 1 varint 150, field 2 "hi"
        long pf = EncodedImageLayout.protobufField(ByteBuffer.wrap(new byte[] {0x08, (byte) 0x96, 0x01, 0x12, 0x02, 'h', 'i'}), 2);
        assertEquals(5L << 32 | 2, pf);
    }
}
