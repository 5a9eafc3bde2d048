package io.flywheel.decode.protobuf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.TimestampProto;
import io.flywheel.decode.DecodeException;
import org.junit.jupiter.api.Test;

/**
 * No protobuf MCAP sample exists in shared/data, so the schema is built here: a
 * foxglove.CompressedImage-like message in package {@code flytest} with a Timestamp, bytes, strings,
 * repeated doubles, nested messages, an enum, a map, a oneof and every 64-bit integer kind. A
 * message is filled with known values, serialized by protobuf-java and decoded back.
 */
class ProtobufDecoderTest {
    static FieldDescriptorProto field(String name, int number, Type type) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(Label.LABEL_OPTIONAL).build();
    }

    static FieldDescriptorProto field(String name, int number, Type type, String typeName) {
        return field(name, number, type).toBuilder().setTypeName(typeName).build();
    }

    static FieldDescriptorProto repeated(FieldDescriptorProto f) {
        return f.toBuilder().setLabel(Label.LABEL_REPEATED).build();
    }

    static FileDescriptorProto imageFile() {
        DescriptorProto pose = DescriptorProto.newBuilder().setName("Pose")
                .addField(field("x", 1, Type.TYPE_DOUBLE)).addField(field("y", 2, Type.TYPE_DOUBLE)).build();
        DescriptorProto labelsEntry = DescriptorProto.newBuilder().setName("LabelsEntry")
                .addField(field("key", 1, Type.TYPE_STRING)).addField(field("value", 2, Type.TYPE_INT32))
                .setOptions(MessageOptions.newBuilder().setMapEntry(true)).build();
        DescriptorProto inner = DescriptorProto.newBuilder().setName("Inner")
                .addField(field("name", 1, Type.TYPE_STRING)).build();
        DescriptorProto image = DescriptorProto.newBuilder().setName("CompressedImage")
                .addNestedType(labelsEntry).addNestedType(inner)
                .addField(field("timestamp", 1, Type.TYPE_MESSAGE, ".google.protobuf.Timestamp"))
                .addField(field("frame_id", 2, Type.TYPE_STRING))
                .addField(field("data", 3, Type.TYPE_BYTES))
                .addField(field("format", 4, Type.TYPE_STRING))
                .addField(repeated(field("k", 5, Type.TYPE_DOUBLE)))
                .addField(field("pose", 6, Type.TYPE_MESSAGE, ".flytest.Pose"))
                .addField(field("encoding", 7, Type.TYPE_ENUM, ".flytest.Encoding"))
                .addField(field("big", 8, Type.TYPE_UINT64))
                .addField(field("u32", 9, Type.TYPE_UINT32))
                .addField(field("s64", 10, Type.TYPE_SINT64))
                .addField(repeated(field("labels", 11, Type.TYPE_MESSAGE, ".flytest.CompressedImage.LabelsEntry")))
                .addField(repeated(field("poses", 12, Type.TYPE_MESSAGE, ".flytest.Pose")))
                .addField(field("f64", 13, Type.TYPE_FIXED64))
                .addField(field("i64", 14, Type.TYPE_INT64))
                .addField(field("ratio", 15, Type.TYPE_FLOAT))
                .addField(field("ok", 16, Type.TYPE_BOOL))
                .addField(field("inner", 17, Type.TYPE_MESSAGE, ".flytest.CompressedImage.Inner"))
                .addField(field("as_text", 18, Type.TYPE_STRING).toBuilder().setOneofIndex(0).build())
                .addField(field("as_number", 19, Type.TYPE_INT32).toBuilder().setOneofIndex(0).build())
                .addField(field("unset_pose", 20, Type.TYPE_MESSAGE, ".flytest.Pose"))
                .addField(field("i32", 21, Type.TYPE_INT32))
                .addOneofDecl(OneofDescriptorProto.newBuilder().setName("payload"))
                .build();
        EnumDescriptorProto encoding = EnumDescriptorProto.newBuilder().setName("Encoding")
                .addValue(EnumValueDescriptorProto.newBuilder().setName("ENCODING_UNKNOWN").setNumber(0))
                .addValue(EnumValueDescriptorProto.newBuilder().setName("JPEG").setNumber(1))
                .addValue(EnumValueDescriptorProto.newBuilder().setName("PNG").setNumber(2)).build();
        return FileDescriptorProto.newBuilder().setName("flytest/image.proto").setPackage("flytest")
                .setSyntax("proto3").addDependency("google/protobuf/timestamp.proto")
                .addMessageType(pose).addMessageType(image).addEnumType(encoding).build();
    }

    /** The set lists the image file before the timestamp file it imports. */
    static FileDescriptorSet set(boolean withTimestampFile) {
        FileDescriptorSet.Builder b = FileDescriptorSet.newBuilder().addFile(imageFile());
        if (withTimestampFile) {
            b.addFile(TimestampProto.getDescriptor().toProto());
        }
        return b.build();
    }

    static byte[] sampleMessage(Descriptor d) {
        Descriptor ts = d.findFieldByName("timestamp").getMessageType();
        Descriptor pose = d.findFieldByName("pose").getMessageType();
        Descriptor entry = d.findFieldByName("labels").getMessageType();
        Descriptor inner = d.findFieldByName("inner").getMessageType();
        DynamicMessage.Builder m = DynamicMessage.newBuilder(d);
        m.setField(d.findFieldByName("timestamp"), DynamicMessage.newBuilder(ts)
                .setField(ts.findFieldByName("seconds"), 1_700_000_000L)
                .setField(ts.findFieldByName("nanos"), 250_000_000).build());
        m.setField(d.findFieldByName("frame_id"), "camera_front");
        m.setField(d.findFieldByName("data"), ByteString.copyFrom(new byte[] {(byte) 0xFF, (byte) 0xD8, 0, 7}));
        m.setField(d.findFieldByName("format"), "jpeg");
        for (double k : new double[] {500.0, 0.0, 320.5}) {
            m.addRepeatedField(d.findFieldByName("k"), k);
        }
        m.setField(d.findFieldByName("pose"), DynamicMessage.newBuilder(pose)
                .setField(pose.findFieldByName("x"), 1.25).setField(pose.findFieldByName("y"), -2.5).build());
        m.setField(d.findFieldByName("encoding"), d.getFile().findEnumTypeByName("Encoding").findValueByName("PNG"));
        m.setField(d.findFieldByName("big"), -1L); // uint64 2^64-1
        m.setField(d.findFieldByName("u32"), -2); // uint32 4294967294
        m.setField(d.findFieldByName("s64"), -9_000_000_000L);
        m.addRepeatedField(d.findFieldByName("labels"), DynamicMessage.newBuilder(entry)
                .setField(entry.findFieldByName("key"), "cars").setField(entry.findFieldByName("value"), 3).build());
        m.addRepeatedField(d.findFieldByName("labels"), DynamicMessage.newBuilder(entry)
                .setField(entry.findFieldByName("key"), "people").setField(entry.findFieldByName("value"), 1).build());
        m.addRepeatedField(d.findFieldByName("poses"), DynamicMessage.newBuilder(pose)
                .setField(pose.findFieldByName("x"), 3.0).build());
        m.setField(d.findFieldByName("f64"), Long.MAX_VALUE);
        m.setField(d.findFieldByName("i64"), Long.MIN_VALUE);
        m.setField(d.findFieldByName("ratio"), 0.75f);
        m.setField(d.findFieldByName("ok"), true);
        m.setField(d.findFieldByName("inner"), DynamicMessage.newBuilder(inner)
                .setField(inner.findFieldByName("name"), "nested").build());
        m.setField(d.findFieldByName("as_number"), 42);
        // i32 left unset: proto3 default 0
        return m.build().toByteArray();
    }

    @Test
    @SuppressWarnings("unchecked")
    void decodesEveryFieldKind() throws DecodeException {
        for (boolean withTimestampFile : new boolean[] {true, false}) {
            ProtobufDecoder dec = ProtobufDecoder.forSchema("flytest.CompressedImage",
                    set(withTimestampFile).toByteArray());
            byte[] bytes = sampleMessage(dec.descriptor());
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            Map<String, Object> m = (Map<String, Object>) dec.decode(buf);
            assertEquals(0, buf.position());
            assertEquals(List.of("timestamp", "frame_id", "data", "format", "k", "pose", "encoding", "big", "u32",
                    "s64", "labels", "poses", "f64", "i64", "ratio", "ok", "inner", "as_text", "as_number",
                    "unset_pose", "i32"), List.copyOf(m.keySet()));
            assertEquals(Map.of("seconds", 1_700_000_000L, "nanos", 250_000_000), m.get("timestamp"));
            assertEquals("camera_front", m.get("frame_id"));
            assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xD8, 0, 7}, (byte[]) m.get("data"));
            assertEquals("jpeg", m.get("format"));
            assertEquals(List.of(500.0, 0.0, 320.5), m.get("k"));
            assertEquals(Map.of("x", 1.25, "y", -2.5), m.get("pose"));
            assertEquals("PNG", m.get("encoding"));
            assertEquals(new BigInteger("18446744073709551615"), m.get("big"));
            assertEquals(4_294_967_294L, m.get("u32"));
            assertEquals(-9_000_000_000L, m.get("s64"));
            assertEquals(List.of(Map.of("key", "cars", "value", 3), Map.of("key", "people", "value", 1)),
                    m.get("labels"));
            assertEquals(List.of(Map.of("x", 3.0, "y", 0.0)), m.get("poses"));
            assertEquals(Long.MAX_VALUE, m.get("f64"));
            assertEquals(Long.MIN_VALUE, m.get("i64"));
            assertEquals(0.75f, m.get("ratio"));
            assertEquals(true, m.get("ok"));
            assertEquals(Map.of("name", "nested"), m.get("inner"));
            assertNull(m.get("as_text"), "the oneof member that is not set");
            assertEquals(42, m.get("as_number"));
            assertNull(m.get("unset_pose"), "an unset message field");
            assertEquals(0, m.get("i32"), "an unset proto3 scalar holds its default");
        }
    }

    @Test
    void leadingDotAndEmptyMessage() throws DecodeException {
        ProtobufDecoder dec = ProtobufDecoder.forSchema(".flytest.Pose", set(true).toByteArray());
        assertEquals(Map.of("x", 0.0, "y", 0.0), dec.decode(ByteBuffer.allocate(0)));
        ProtobufDecoder ts = ProtobufDecoder.forSchema("google.protobuf.Timestamp", set(true).toByteArray());
        assertEquals(Map.of("seconds", 5L, "nanos", 0), ts.decode(ByteBuffer.wrap(new byte[] {8, 5})));
    }

    @Test
    void unknownEnumNumberStaysANumber() throws DecodeException {
        ProtobufDecoder dec = ProtobufDecoder.forSchema("flytest.CompressedImage", set(true).toByteArray());
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) dec.decode(ByteBuffer.wrap(new byte[] {7 << 3, 9}));
        assertEquals(9, m.get("encoding"));
    }

    @Test
    void badInputGivesDecodeException() throws DecodeException {
        DecodeException e = assertThrows(DecodeException.class,
                () -> ProtobufDecoder.forSchema("flytest.Nope", set(true).toByteArray()));
        assertTrue(e.getMessage().contains("flytest.Nope") && e.getMessage().contains("flytest/image.proto"),
                e.getMessage());
        e = assertThrows(DecodeException.class,
                () -> ProtobufDecoder.forSchema("flytest.Pose", new byte[] {(byte) 0xFF, 1, 2}));
        assertTrue(e.getMessage().contains("FileDescriptorSet"), e.getMessage());
        FileDescriptorSet missing = FileDescriptorSet.newBuilder().addFile(imageFile().toBuilder()
                .addDependency("flytest/other.proto")).build();
        e = assertThrows(DecodeException.class,
                () -> ProtobufDecoder.forSchema("flytest.Pose", missing.toByteArray()));
        assertTrue(e.getMessage().contains("flytest/other.proto"), e.getMessage());

        ProtobufDecoder dec = ProtobufDecoder.forSchema("flytest.CompressedImage", set(true).toByteArray());
        byte[] full = sampleMessage(dec.descriptor());
        int failures = 0;
        for (int cut = 1; cut < full.length; cut++) {
            try {
                dec.decode(ByteBuffer.wrap(Arrays.copyOf(full, cut)));
            } catch (DecodeException x) {
                failures++;
                assertTrue(x.getMessage().startsWith("flytest.CompressedImage protobuf message at byte "),
                        x.getMessage());
            }
        }
        // a cut between two fields is a valid shorter message; a cut inside one is not
        assertTrue(failures > full.length / 2, failures + " of " + full.length);
    }
}
