package io.flywheel.ros.cdr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.testkit.SharedData;

/** Fast paths agree with the generic decoder on the real file and on big-endian bytes. */
class CdrFastPathsTest {

    private static long stampNs(Map<?, ?> msg) {
        Map<?, ?> stamp = (Map<?, ?>) ((Map<?, ?>) msg.get("header")).get("stamp");
        return ((Integer) stamp.get("sec")) * 1_000_000_000L + (Long) stamp.get("nanosec");
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    @Test
    void agreeWithTheGenericDecoderOnRealMessages() throws Exception {
        ReferenceRun run = ReferenceRun.of(SharedData.data("mcap-real/rosbags-rs/test_bag_mcap/test_bag_mcap.mcap"));
        Set<String> seen = new HashSet<>();
        int stamped = 0;
        for (ReferenceRun.Message m : run.messages) {
            ReferenceRun.Channel c = m.channel();
            MessageDecoder d = Decoders.forSchema(c.messageEncoding(), c.schemaName(), c.schemaEncoding(),
                    c.schema().getBytes(StandardCharsets.UTF_8));
            Map<?, ?> tree = (Map<?, ?>) d.decode(ByteBuffer.wrap(m.data()));
            ByteBuffer buf = ByteBuffer.wrap(m.data());
            if (c.schema().startsWith("std_msgs/Header header")) {
                assertEquals(stampNs(tree), CdrFastPaths.headerStamp(buf), c.topic());
                assertEquals(((Map<?, ?>) tree.get("header")).get("frame_id"), CdrFastPaths.header(buf).frameId());
                stamped++;
            }
            switch (c.schemaName()) {
                case "sensor_msgs/msg/CompressedImage" -> {
                    CdrFastPaths.CompressedImage ci = CdrFastPaths.compressedImage(buf);
                    assertEquals(stampNs(tree), ci.stampNs());
                    assertEquals(tree.get("format"), ci.format());
                    assertArrayEquals((byte[]) tree.get("data"), bytes(ci.data()));
                    assertTrue(ci.data().isReadOnly());
                    seen.add(c.schemaName());
                }
                case "sensor_msgs/msg/Image" -> {
                    CdrFastPaths.Image im = CdrFastPaths.image(buf);
                    assertEquals(stampNs(tree), im.stampNs());
                    assertEquals(tree.get("height"), (long) im.height());
                    assertEquals(tree.get("width"), (long) im.width());
                    assertEquals(tree.get("encoding"), im.encoding());
                    assertEquals(((Integer) tree.get("is_bigendian")) != 0, im.isBigendian());
                    assertEquals(tree.get("step"), (long) im.step());
                    assertArrayEquals((byte[]) tree.get("data"), bytes(im.data()));
                    // the file's values are synthetic: data is shorter than step * height, kept as recorded
                    seen.add(c.schemaName());
                }
                case "sensor_msgs/msg/JointState" -> {
                    CdrFastPaths.JointState js = CdrFastPaths.jointState(buf);
                    assertEquals(stampNs(tree), js.stampNs());
                    assertEquals(tree.get("name"), js.names());
                    assertEquals(tree.get("position"), Arrays.stream(js.position()).boxed().toList());
                    assertEquals(tree.get("velocity"), Arrays.stream(js.velocity()).boxed().toList());
                    assertEquals(tree.get("effort"), Arrays.stream(js.effort()).boxed().toList());
                    assertTrue(js.names().size() > 0);
                    seen.add(c.schemaName());
                }
                default -> { }
            }
        }
        assertEquals(Set.of("sensor_msgs/msg/CompressedImage", "sensor_msgs/msg/Image", "sensor_msgs/msg/JointState"), seen);
        assertTrue(stamped > 50, "messages with a header: " + stamped);
    }

    @Test
    void bigEndianMessages() throws Exception {
        byte[] img = new CdrTestWriter(true).i32(12).u32(345).string("cam").u32(2).u32(3).string("mono8").u8(1).u32(3)
                .u32(6).raw(new byte[] {1, 2, 3, 4, 5, 6}).bytes();
        CdrFastPaths.Image im = CdrFastPaths.image(ByteBuffer.wrap(img));
        assertEquals(new CdrFastPaths.Image(12_000_000_345L, "cam", 2, 3, "mono8", true, 3, im.data()), im);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6}, bytes(im.data()));
        assertEquals(12_000_000_345L, CdrFastPaths.headerStamp(ByteBuffer.wrap(img)));

        byte[] ci = new CdrTestWriter(true).i32(-1).u32(5).string("").string("jpeg").u32(3).raw(new byte[] {(byte) 0xFF,
                (byte) 0xD8, (byte) 0xFF}).bytes();
        CdrFastPaths.CompressedImage c = CdrFastPaths.compressedImage(ByteBuffer.wrap(ci));
        assertEquals(-999_999_995L, c.stampNs());
        assertEquals("jpeg", c.format());
        assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xD8, (byte) 0xFF}, bytes(c.data()));

        byte[] js = new CdrTestWriter(true).i32(1).u32(2).string("base").u32(2).string("j1").string("j2")
                .u32(2).f64(0.5).f64(-0.5).u32(0).u32(1).f64(9.0).bytes();
        CdrFastPaths.JointState j = CdrFastPaths.jointState(ByteBuffer.wrap(js));
        assertEquals(1_000_000_002L, j.stampNs());
        assertEquals("base", j.frameId());
        assertEquals(List.of("j1", "j2"), j.names());
        assertArrayEquals(new double[] {0.5, -0.5}, j.position());
        assertArrayEquals(new double[0], j.velocity());
        assertArrayEquals(new double[] {9.0}, j.effort());
    }

    @Test
    void truncatedMessagesNameTheField() throws Exception {
        byte[] js = new CdrTestWriter(false).i32(1).u32(2).string("base").u32(2).string("j1").string("j2")
                .u32(2).f64(0.5).f64(-0.5).u32(0).u32(1).f64(9.0).bytes();
        for (int len = 0; len < js.length; len++) {
            ByteBuffer b = ByteBuffer.wrap(Arrays.copyOf(js, len));
            DecodeException e = assertThrows(DecodeException.class, () -> CdrFastPaths.jointState(b), "length " + len);
            assertTrue(e.getMessage().contains("sensor_msgs/msg/JointState"), e.getMessage());
        }
        DecodeException e = assertThrows(DecodeException.class,
                () -> CdrFastPaths.jointState(ByteBuffer.wrap(Arrays.copyOf(js, js.length - 3))));
        assertTrue(e.getMessage().contains("field effort"), e.getMessage());
        byte[] huge = new CdrTestWriter(false).i32(1).u32(2).string("").string("jpeg").u32(0xFFFF_FFFFL).bytes();
        DecodeException e2 = assertThrows(DecodeException.class, () -> CdrFastPaths.compressedImage(ByteBuffer.wrap(huge)));
        assertTrue(e2.getMessage().contains("field data at byte offset 32"), e2.getMessage());
        assertThrows(DecodeException.class, () -> CdrFastPaths.headerStamp(ByteBuffer.wrap(new byte[] {0, 1, 0, 0, 1})));
    }
}
