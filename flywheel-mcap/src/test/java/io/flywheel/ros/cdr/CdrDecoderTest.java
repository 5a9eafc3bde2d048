package io.flywheel.ros.cdr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.flywheel.decode.DecodeException;
import io.flywheel.ros.msgdef.Dialect;
import io.flywheel.ros.msgdef.MsgDefParser;

class CdrDecoderTest {

    private static Object decode(String type, String text, byte[] bytes) throws DecodeException {
        return CdrDecoder.create(MsgDefParser.parse(type, text, Dialect.ROS2)).decode(ByteBuffer.wrap(bytes));
    }

    @Test
    void emptyMessageIsAnEmptyMapWithOrWithoutThePlaceholderByte() throws Exception {
        assertEquals(Map.of(), decode("std_msgs/msg/Empty", "", new byte[] {0, 1, 0, 0, 0}));
        assertEquals(Map.of(), decode("std_msgs/msg/Empty", "", new byte[] {0, 1, 0, 0}));
        assertEquals(Map.of(), decode("std_msgs/msg/Empty", "", new byte[] {0, 0, 0, 0, 0}));
        // nested: the placeholder byte is consumed, so x is aligned after it
        String text = "std_msgs/Empty e\nint32 x\n" + "=".repeat(80) + "\nMSG: std_msgs/Empty\n";
        byte[] b = new CdrTestWriter(false).u8(0).i32(77).bytes();
        assertEquals(Map.of("e", Map.of(), "x", 77), decode("demo/msg/T", text, b));
        assertEquals(List.of(Map.of(), Map.of()), ((Map<?, ?>) decode("demo/msg/U", "std_msgs/Empty[] es\n"
                + "=".repeat(80) + "\nMSG: std_msgs/Empty\n", new CdrTestWriter(false).u32(2).u8(0).u8(0).bytes())).get("es"));
    }

    @Test
    void bigEndianAndLittleEndianGiveTheSameTree() throws Exception {
        String text = "int16 a\nuint16 b\nuint32 c\nint64 d\nfloat32 e\nfloat64 f\nbool g\nchar h\nbyte i\nint8 j\n"
                + "float64[] k\nuint32[2] l\nstring m\nbuiltin_interfaces/Time t";
        Object[] trees = new Object[2];
        for (int be = 0; be < 2; be++) {
            CdrTestWriter w = new CdrTestWriter(be == 1);
            w.i16(-2).i16(0xFFFE).u32(4_000_000_000L).i64(-3).f32(Float.NaN).f64(Double.NEGATIVE_INFINITY).bool(true)
                    .u8(200).u8(255).u8(0x80).u32(2).f64(1.25).f64(-0.0).u32(7).u32(0xFFFF_FFFFL).string("µ")
                    .i32(-1).u32(999_999_999L);
            trees[be] = decode("demo/msg/P", text, w.bytes());
        }
        Map<?, ?> m = (Map<?, ?>) trees[0];
        assertEquals(-2, m.get("a"));
        assertEquals(65534, m.get("b"));
        assertEquals(4_000_000_000L, m.get("c"));
        assertEquals(-3L, m.get("d"));
        assertTrue(((Float) m.get("e")).isNaN());
        assertEquals(Double.NEGATIVE_INFINITY, m.get("f"));
        assertEquals(true, m.get("g"));
        assertEquals(200, m.get("h"));
        assertEquals(255, m.get("i")); // ROS 2 byte is unsigned
        assertEquals(-128, m.get("j"));
        assertEquals(List.of(1.25, -0.0), m.get("k"));
        assertEquals(List.of(7L, 4_294_967_295L), m.get("l"));
        assertEquals("µ", m.get("m"));
        assertEquals(Map.of("sec", -1, "nanosec", 999_999_999L), m.get("t"));
        assertEquals(trees[0].toString(), trees[1].toString());
    }

    @Test
    void byteArraysAreByteArraysAndEmptyArraysAddNoPadding() throws Exception {
        // an empty float64[] adds no alignment, so the uint8 right after it sits at payload offset 4
        String text = "uint8[] raw\nfloat64[] none\nuint8 after\nchar[3] fixed";
        byte[] b = new CdrTestWriter(false).u32(2).u8(9).u8(8).u32(0).u8(5).u8(1).u8(2).u8(3).bytes();
        Map<?, ?> m = (Map<?, ?>) decode("demo/msg/R", text, b);
        assertArrayEquals(new byte[] {9, 8}, (byte[]) m.get("raw"));
        assertEquals(List.of(), m.get("none"));
        assertEquals(5, m.get("after"));
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) m.get("fixed"));
    }

    @Test
    void errorsNameTypeFieldPathAndOffset() throws Exception {
        String text = "Pose[] poses\n" + "=".repeat(80) + "\nMSG: demo/Pose\nfloat64 x\nstring name";
        byte[] b = new CdrTestWriter(false).u32(2).f64(1).string("a").f64(2).bytes(); // poses[1].name missing
        DecodeException e = assertThrows(DecodeException.class, () -> decode("demo/msg/Poses", text, b));
        assertEquals("CDR demo/msg/Poses: field poses[1].name at byte offset " + b.length + " (message is " + b.length
                + " bytes): needs 4 bytes for a 32-bit value, only 0 left", e.getMessage());
        byte[] huge = new CdrTestWriter(false).u32(0x7FFF_FFFF).bytes();
        DecodeException e2 = assertThrows(DecodeException.class, () -> decode("demo/msg/Poses", text, huge));
        assertTrue(e2.getMessage().contains("field poses at byte offset 4"), e2.getMessage());
        assertThrows(DecodeException.class, () -> decode("demo/msg/Poses", text, new byte[] {0, 1}));
        assertThrows(DecodeException.class, () -> decode("demo/msg/Poses", text, new byte[] {1, 1, 0, 0}));
    }

    @Test
    void rejectsRos1Schemas() throws Exception {
        assertThrows(DecodeException.class, () -> CdrDecoder.create(MsgDefParser.parse("a/B", "int32 x", Dialect.ROS1)));
    }
}
