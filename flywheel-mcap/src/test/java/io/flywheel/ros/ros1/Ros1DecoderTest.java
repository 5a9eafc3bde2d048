package io.flywheel.ros.ros1;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.flywheel.decode.DecodeException;
import org.junit.jupiter.api.Test;

/** The ROS 1 decoder on hand-serialised messages whose every byte is known. */
class Ros1DecoderTest {
    static final String DEF = String.join("\n",
            "# a test type covering the ROS 1 wire types",
            "Header header",
            "uint8 MODE_A=1",
            "string GREETING=hello # not a comment",
            "bool flag",
            "int8 i8",
            "uint8 u8",
            "int16 i16",
            "uint16 u16",
            "int32 i32",
            "uint32 u32",
            "int64 i64",
            "uint64 u64 # a trailing comment",
            "float32 f32",
            "float64 f64",
            "string s",
            "time t",
            "duration d",
            "uint8[] blob",
            "char[2] chars",
            "float64[3] vec",
            "Point[] points",
            "geometry_msgs/Point fixed_point",
            "string[] names",
            "================================================================================",
            "MSG: std_msgs/Header",
            "uint32 seq",
            "time stamp",
            "string frame_id",
            "================================================================================",
            "MSG: geometry_msgs/Point",
            "float64 x",
            "float64 y",
            "float64 z",
            "");

    private static final class W {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        W put(int n, long v) {
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v);
            out.write(b.array(), 0, n);
            return this;
        }

        W f32(float f) {
            return put(4, Float.floatToIntBits(f));
        }

        W f64(double d) {
            return put(8, Double.doubleToLongBits(d));
        }

        W str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            put(4, b.length);
            out.write(b, 0, b.length);
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    static byte[] sample() {
        W w = new W();
        w.put(4, 7).put(4, 1_700_000_000L).put(4, 5).str("base_link"); // header
        w.put(1, 1).put(1, -3).put(1, 250).put(2, -1234).put(2, 60000).put(4, -100000).put(4, 4_000_000_000L);
        w.put(8, -5_000_000_000L).put(8, -1L); // u64 = 2^64-1
        w.f32(1.5f).f64(-2.25).str("héllo");
        w.put(4, 10).put(4, 20); // time
        w.put(4, -1).put(4, -500); // duration
        w.put(4, 3).put(1, 1).put(1, 2).put(1, 255); // blob
        w.put(1, 'o').put(1, 'k'); // chars
        w.f64(1).f64(2).f64(3); // vec
        w.put(4, 2).f64(0.5).f64(1.5).f64(2.5).f64(-1).f64(-2).f64(-3); // points
        w.f64(9).f64(8).f64(7); // fixed_point
        w.put(4, 2).str("a").str(""); // names
        return w.bytes();
    }

    @Test
    @SuppressWarnings("unchecked")
    void decodesEveryWireType() throws DecodeException {
        Ros1Decoder d = Ros1Decoder.forDefinition("test_msgs/Everything", DEF);
        ByteBuffer buf = ByteBuffer.wrap(sample());
        Map<String, Object> m = (Map<String, Object>) d.decode(buf);
        assertEquals(0, buf.position(), "position unchanged");
        assertEquals(List.of("header", "flag", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64",
                "s", "t", "d", "blob", "chars", "vec", "points", "fixed_point", "names"), List.copyOf(m.keySet()));
        Map<String, Object> h = (Map<String, Object>) m.get("header");
        assertEquals(7L, h.get("seq"));
        assertEquals(Map.of("sec", 1_700_000_000L, "nsec", 5L), h.get("stamp"));
        assertEquals("base_link", h.get("frame_id"));
        assertEquals(true, m.get("flag"));
        assertEquals(-3, m.get("i8"));
        assertEquals(250, m.get("u8"));
        assertEquals(-1234, m.get("i16"));
        assertEquals(60000, m.get("u16"));
        assertEquals(-100000, m.get("i32"));
        assertEquals(4_000_000_000L, m.get("u32"));
        assertEquals(-5_000_000_000L, m.get("i64"));
        assertEquals(new BigInteger("18446744073709551615"), m.get("u64"));
        assertEquals(1.5f, m.get("f32"));
        assertEquals(-2.25, m.get("f64"));
        assertEquals("héllo", m.get("s"));
        assertEquals(Map.of("sec", 10L, "nsec", 20L), m.get("t"));
        assertEquals(Map.of("sec", -1, "nsec", -500), m.get("d"));
        assertArrayEquals(new byte[] {1, 2, (byte) 255}, (byte[]) m.get("blob"));
        assertArrayEquals("ok".getBytes(StandardCharsets.US_ASCII), (byte[]) m.get("chars"));
        assertEquals(List.of(1.0, 2.0, 3.0), m.get("vec"));
        assertEquals(List.of(Map.of("x", 0.5, "y", 1.5, "z", 2.5), Map.of("x", -1.0, "y", -2.0, "z", -3.0)),
                m.get("points"));
        assertEquals(Map.of("x", 9.0, "y", 8.0, "z", 7.0), m.get("fixed_point"));
        assertEquals(List.of("a", ""), m.get("names"));
    }

    @Test
    void everyTruncationNamesFieldAndOffset() throws DecodeException {
        Ros1Decoder d = Ros1Decoder.forDefinition("test_msgs/Everything", DEF);
        byte[] full = sample();
        for (int cut = 0; cut < full.length; cut++) {
            ByteBuffer b = ByteBuffer.wrap(full, 0, cut);
            DecodeException e = assertThrows(DecodeException.class, () -> d.decode(b), "cut " + cut);
            assertTrue(e.getMessage().startsWith("test_msgs/Everything field '") && e.getMessage().contains("at byte "),
                    e.getMessage());
        }
        DecodeException first = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(full, 0, 2)));
        assertEquals("test_msgs/Everything field 'header.seq' (uint32) at byte 0: needs 4 bytes, 2 left of 2",
                first.getMessage());
    }

    @Test
    void hugeCountsAndTrailingBytesAreRejected() throws DecodeException {
        Ros1Decoder d = Ros1Decoder.forDefinition("pkg/Arr", "geometry_msgs/Point[] pts\n===\nMSG: geometry_msgs/Point\n"
                + "float64 x\nfloat64 y\nfloat64 z\n");
        byte[] huge = new W().put(4, 0xFFFF_FFFFL).bytes();
        DecodeException e = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(huge)));
        assertTrue(e.getMessage().contains("'pts'") && e.getMessage().contains("count 4294967295"), e.getMessage());
        byte[] extra = new W().put(4, 0).put(1, 9).bytes();
        e = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(extra)));
        assertTrue(e.getMessage().contains("1 bytes left after the last field"), e.getMessage());

        Ros1Decoder empty = Ros1Decoder.forDefinition("pkg/E", "pkg/Nothing[] xs\n===\nMSG: pkg/Nothing\n# no fields\n");
        e = assertThrows(DecodeException.class, () -> empty.decode(ByteBuffer.wrap(huge)));
        assertTrue(e.getMessage().contains("count 4294967295"), e.getMessage());
        assertEquals(Map.of("xs", List.of(Map.of(), Map.of())), empty.decode(ByteBuffer.wrap(new W().put(4, 2).bytes())));
    }

    @Test
    void badDefinitionsAreRejected() {
        DecodeException e = assertThrows(DecodeException.class,
                () -> Ros1Decoder.forDefinition("pkg/A", "pkg/Missing m\n"));
        assertTrue(e.getMessage().contains("pkg/Missing"), e.getMessage());
        e = assertThrows(DecodeException.class, () -> Ros1Decoder.forDefinition("pkg/A", "int32[x] a\n"));
        assertTrue(e.getMessage().contains("int32[x]"), e.getMessage());
        e = assertThrows(DecodeException.class,
                () -> Ros1Decoder.forDefinition("pkg/A", "B b\n===\nMSG: pkg/B\nA a\n===\nMSG: pkg/A\nint8 x\n"));
        assertTrue(e.getMessage().contains("inside itself"), e.getMessage());
        e = assertThrows(DecodeException.class, () -> Ros1Decoder.forDefinition("pkg/A", "int32\n"));
        assertTrue(e.getMessage().contains("'int32'"), e.getMessage());
    }

    @Test
    void ros2OnlySyntaxIsRejected() {
        for (String def : List.of("string<=5 s\n", "int32[<=3] a\n", "wstring w\n")) {
            DecodeException e = assertThrows(DecodeException.class, () -> Ros1Decoder.forDefinition("pkg/A", def));
            assertTrue(e.getMessage().contains("not ROS 1"), e.getMessage());
        }
    }

    @Test
    void forSchemaTakesUtf8Text() throws DecodeException {
        var d = Ros1Decoder.forSchema("turtlesim/Color", "uint8 r\nuint8 g\nuint8 b\n".getBytes(StandardCharsets.UTF_8));
        assertEquals(Map.of("r", 1, "g", 2, "b", 3), d.decode(ByteBuffer.wrap(new byte[] {1, 2, 3})));
    }
}
