package io.flywheel.decode;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;

import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.mcap.McapWriter;
import io.flywheel.mcap.MessageView;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * The shared data has no ros2idl, protobuf or ros1 sample in MCAP: this writes one file with our
 * writer holding a channel of each encoding (plus JSON), reads it back through {@link McapMessages}
 * and the {@link Decoders} registry, and checks every field against the values written.
 */
class EncodingsThroughMcapTest {
    private static final String IDL = """
            module demo_msgs {
              module msg {
                struct Gripper {
                  string<16> name;
                  double width_m;
                  sequence<float, 4> finger_forces_n;
                  boolean grasped;
                };
              };
            };
            """;

    private static final String ROS1_DEF = "string name\nfloat64 width_m\nuint32[] counts\ntime stamp\n";

    private static final String JSON_SCHEMA =
            "{\"type\":\"object\",\"properties\":{\"task\":{\"type\":\"string\"},\"blob\":{\"type\":\"string\","
                    + "\"contentEncoding\":\"base64\"}}}";

    @Test
    void everyEncodingRoundTripsThroughOurWriterAndReader(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("encodings.mcap");
        Descriptors.Descriptor proto = protoDescriptor();
        try (McapWriter w = McapWriter.builder().profile("").compression(McapWriter.Compression.LZ4).build(file)) {
            int idl = w.registerChannel("/gripper", "cdr",
                    w.registerSchema("demo_msgs/msg/Gripper", "ros2idl", IDL.getBytes(StandardCharsets.UTF_8)), Map.of());
            CdrWriter cdr = new CdrWriter(64).string("left").float64(0.0425).int32(2).float32(1.5f).float32(-2.25f)
                    .bool(true);
            w.writeMessage(idl, 0, 100, 100, cdr.toByteArray());

            int pb = w.registerChannel("/pose", "protobuf", w.registerSchema("demo.Pose", "protobuf",
                    FileDescriptorSet.newBuilder().addFile(proto.getFile().toProto()).build().toByteArray()), Map.of());
            DynamicMessage pose = DynamicMessage.newBuilder(proto)
                    .setField(proto.findFieldByName("frame"), "base")
                    .addRepeatedField(proto.findFieldByName("xyz"), 1.0)
                    .addRepeatedField(proto.findFieldByName("xyz"), -2.5)
                    .addRepeatedField(proto.findFieldByName("xyz"), 0.125)
                    .setField(proto.findFieldByName("stamp_ns"), 1_700_000_000_123_456_789L)
                    .setField(proto.findFieldByName("jpeg"), ByteString.copyFrom(new byte[] {(byte) 0xFF, (byte) 0xD8, 7}))
                    .build();
            w.writeMessage(pb, 0, 200, 200, pose.toByteArray());

            int r1 = w.registerChannel("/legacy", "ros1",
                    w.registerSchema("demo/Legacy", "ros1msg", ROS1_DEF.getBytes(StandardCharsets.UTF_8)), Map.of());
            ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
            b.putInt(3).put("arm".getBytes(StandardCharsets.UTF_8)).putDouble(0.5).putInt(2).putInt(7).putInt(-1)
                    .putInt(1_700_000_000).putInt(250_000_000);
            w.writeMessage(r1, 0, 300, 300, b.array(), 0, b.position());

            int js = w.registerChannel("/task", "json",
                    w.registerSchema("demo.Task", "jsonschema", JSON_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            w.writeMessage(js, 0, 400, 400, "{\"task\":\"pick the cup\",\"blob\":\"AQID\"}".getBytes(StandardCharsets.UTF_8));
        }

        Map<String, Object> decoded = new HashMap<>();
        try (McapMessages m = McapMessages.open(file, McapIndexedReader.ReadOptions.all())) {
            MessageView v;
            while ((v = m.next()) != null) {
                byte[] schema = new byte[v.schema().data().remaining()];
                v.schema().data().duplicate().get(schema);
                MessageDecoder d = Decoders.forSchema(v.channel().messageEncoding(), v.schema().name(),
                        v.schema().encoding(), schema);
                decoded.put(v.topic(), d.decode(v.message().data()));
            }
        }

        Map<?, ?> gripper = (Map<?, ?>) decoded.get("/gripper");
        assertEquals("left", gripper.get("name"));
        assertEquals(0.0425, gripper.get("width_m"));
        assertEquals(List.of(1.5f, -2.25f), gripper.get("finger_forces_n"));
        assertEquals(true, gripper.get("grasped"));

        Map<?, ?> p = (Map<?, ?>) decoded.get("/pose");
        assertEquals("base", p.get("frame"));
        assertEquals(List.of(1.0, -2.5, 0.125), p.get("xyz"));
        assertEquals(1_700_000_000_123_456_789L, p.get("stamp_ns"));
        assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xD8, 7}, (byte[]) p.get("jpeg"));

        Map<?, ?> legacy = (Map<?, ?>) decoded.get("/legacy");
        assertEquals("arm", legacy.get("name"));
        assertEquals(0.5, legacy.get("width_m"));
        assertEquals(List.of(7L, 4294967295L), legacy.get("counts"), "uint32 values are unsigned");
        assertEquals(Map.of("sec", 1_700_000_000L, "nsec", 250_000_000L), legacy.get("stamp"));

        Map<?, ?> task = (Map<?, ?>) decoded.get("/task");
        assertEquals("pick the cup", task.get("task"));
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) task.get("blob"));
    }

    private static Descriptors.Descriptor protoDescriptor() throws Descriptors.DescriptorValidationException {
        DescriptorProto msg = DescriptorProto.newBuilder().setName("Pose")
                .addField(field("frame", 1, FieldDescriptorProto.Type.TYPE_STRING, false))
                .addField(field("xyz", 2, FieldDescriptorProto.Type.TYPE_DOUBLE, true))
                .addField(field("stamp_ns", 3, FieldDescriptorProto.Type.TYPE_INT64, false))
                .addField(field("jpeg", 4, FieldDescriptorProto.Type.TYPE_BYTES, false))
                .build();
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("demo/pose.proto").setPackage("demo")
                .setSyntax("proto3").addMessageType(msg).build();
        return Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[0]).findMessageTypeByName("Pose");
    }

    private static FieldDescriptorProto field(String name, int number, FieldDescriptorProto.Type type, boolean repeated) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type)
                .setLabel(repeated ? FieldDescriptorProto.Label.LABEL_REPEATED : FieldDescriptorProto.Label.LABEL_OPTIONAL)
                .build();
    }
}
