package io.flywheel.ros.cdr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;

/**
 * ros2idl schemas (hand-written: no real sample exists) decoded from CDR bytes written by
 * {@link CdrTestWriter}, little- and big-endian, checked field by field; plus truncation and
 * corruption.
 */
class IdlCdrDecodeTest {

    static final String IDL = """
            ================================================================================
            IDL: demo_msgs/msg/Sample
            // generated from rosidl_adapter/resource/msg.idl.em
            #include "std_msgs/msg/Header.idl"

            module demo_msgs {
              module msg {
                typedef double double__9[9];
                module Sample_Constants {
                  const uint8 MODE_IDLE = 0;
                  const int32 LIMIT = -42;
                  const string NAME = "sample";
                };
                @verbatim (language="comment", text=
                  "A sample message." "\\n"
                  "Second line (with parens)")
                struct Sample {
                  std_msgs::msg::Header header;

                  @default (value=7)
                  uint8 mode;

                  sequence<int32> counts;
                  sequence<demo_msgs::msg::Point, 2> points;
                  string<10> label;
                  @default (value="hi")
                  string greeting;
                  double__9 covariance;
                  float gains[3];
                  sequence<string<4>> tags;
                  boolean flag;
                  int64 big;
                  unsigned long long ubig;
                  octet raw[4];
                  Point origin;
                  builtin_interfaces::msg::Duration timeout;
                  /* trailing comment */
                };
              };
            };

            ================================================================================
            IDL: demo_msgs/msg/Point
            module demo_msgs {
              module msg {
                struct Point {
                  double x;
                  double y;
                };
              };
            };

            ================================================================================
            IDL: std_msgs/msg/Header
            module std_msgs {
              module msg {
                struct Header {
                  builtin_interfaces::msg::Time stamp;
                  string frame_id;
                };
              };
            };
            ================================================================================
            IDL: builtin_interfaces/msg/Time
            module builtin_interfaces { module msg { struct Time { int32 sec; uint32 nanosec; }; }; };
            """;

    static byte[] encodeSample(boolean bigEndian) {
        CdrTestWriter w = new CdrTestWriter(bigEndian);
        w.i32(1_700_000_000).u32(123_456_789L).string("base_link"); // header
        w.u8(3); // mode
        w.u32(3).i32(1).i32(-2).i32(300_000); // counts
        w.u32(1).f64(1.5).f64(-2.5); // points
        w.string("lbl");
        w.string("hello");
        for (int i = 0; i < 9; i++) {
            w.f64(i * 0.5); // covariance
        }
        w.f32(0.1f).f32(0.2f).f32(0.3f); // gains
        w.u32(2).string("a").string("bcd"); // tags
        w.bool(true);
        w.i64(-9_000_000_000L);
        w.i64(-1L); // ubig = 2^64 - 1
        w.raw((byte) 1, (byte) 2, (byte) 254, (byte) 255);
        w.f64(3.0).f64(4.0); // origin
        w.i32(-5).u32(500); // timeout
        return w.bytes();
    }

    static MessageDecoder sampleDecoder() throws DecodeException {
        return Decoders.forSchema("cdr", "demo_msgs/msg/Sample", "ros2idl", IDL.getBytes(StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void decodesEveryFieldOfTheIdlSample(boolean bigEndian) throws Exception {
        byte[] bytes = encodeSample(bigEndian);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) sampleDecoder().decode(ByteBuffer.wrap(bytes));
        assertEquals(List.of("header", "mode", "counts", "points", "label", "greeting", "covariance", "gains", "tags",
                "flag", "big", "ubig", "raw", "origin", "timeout"), List.copyOf(m.keySet()));
        assertEquals(Map.of("stamp", Map.of("sec", 1_700_000_000, "nanosec", 123_456_789L), "frame_id", "base_link"),
                m.get("header"));
        assertEquals(3, m.get("mode"));
        assertEquals(List.of(1, -2, 300_000), m.get("counts"));
        assertEquals(List.of(Map.of("x", 1.5, "y", -2.5)), m.get("points"));
        assertEquals("lbl", m.get("label"));
        assertEquals("hello", m.get("greeting"));
        assertEquals(List.of(0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0), m.get("covariance"));
        assertEquals(List.of(0.1f, 0.2f, 0.3f), m.get("gains"));
        assertEquals(List.of("a", "bcd"), m.get("tags"));
        assertEquals(true, m.get("flag"));
        assertEquals(-9_000_000_000L, m.get("big"));
        assertEquals(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE), m.get("ubig"));
        assertArrayEquals(new byte[] {1, 2, (byte) 254, (byte) 255}, (byte[]) m.get("raw"));
        assertEquals(Map.of("x", 3.0, "y", 4.0), m.get("origin"));
        assertEquals(Map.of("sec", -5, "nanosec", 500L), m.get("timeout"));
    }

    @Test
    void everyTruncationFailsWithTypeFieldAndOffset() throws Exception {
        byte[] bytes = encodeSample(false);
        MessageDecoder d = sampleDecoder();
        for (int len = 0; len < bytes.length; len++) {
            ByteBuffer b = ByteBuffer.wrap(Arrays.copyOf(bytes, len));
            DecodeException e = assertThrows(DecodeException.class, () -> d.decode(b), "length " + len);
            assertTrue(e.getMessage().contains("demo_msgs/msg/Sample"), e.getMessage());
            assertTrue(e.getMessage().contains("offset"), e.getMessage());
        }
        // cut inside header.frame_id's text (header 4 + stamp 8 + length 4 = 16, text starts there)
        DecodeException e = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(Arrays.copyOf(bytes, 18))));
        assertEquals("CDR demo_msgs/msg/Sample: field header.frame_id at byte offset 12 (message is 18 bytes): "
                + "string length 10 exceeds the 2 bytes left", e.getMessage());
        // cut inside the third element of points... here: inside tags[1]
        int tagsStart = indexOf(bytes, "bcd".getBytes(StandardCharsets.UTF_8)) - 4;
        DecodeException e2 = assertThrows(DecodeException.class,
                () -> d.decode(ByteBuffer.wrap(Arrays.copyOf(bytes, tagsStart + 5))));
        assertTrue(e2.getMessage().contains("field tags[1] at byte offset " + tagsStart), e2.getMessage());
    }

    @Test
    void boundsAreEnforced() throws Exception {
        MessageDecoder d = sampleDecoder();
        // points is sequence<Point, 2>: a count of 3 is corrupt
        CdrTestWriter w = new CdrTestWriter(false);
        w.i32(0).u32(0).string("").u8(0).u32(0).u32(3);
        DecodeException e = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(w.bytes())));
        assertTrue(e.getMessage().contains("field points") && e.getMessage().contains("exceeds its bound 2"), e.getMessage());
        // label is string<10>
        CdrTestWriter w2 = new CdrTestWriter(false);
        w2.i32(0).u32(0).string("").u8(0).u32(0).u32(0).string("eleven char");
        DecodeException e2 = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(w2.bytes())));
        assertTrue(e2.getMessage().contains("field label") && e2.getMessage().contains("bound 10"), e2.getMessage());
    }

    @Test
    void hugeSequenceCountFailsWithoutAllocating() throws Exception {
        MessageDecoder d = sampleDecoder();
        CdrTestWriter w = new CdrTestWriter(false);
        w.i32(0).u32(0).string("").u8(0).u32(0xFFFF_FFF0L); // counts: 4 billion int32s in 0 bytes
        DecodeException e = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(w.bytes())));
        assertTrue(e.getMessage().contains("field counts") && e.getMessage().contains("4294967280 elements"), e.getMessage());
    }

    @Test
    void randomCorruptionOnlyEverGivesDecodeException() throws Exception {
        byte[] good = encodeSample(false);
        MessageDecoder d = sampleDecoder();
        Random rnd = new Random(42);
        int failures = 0;
        for (int i = 0; i < 2000; i++) {
            byte[] bad = good.clone();
            for (int k = 0; k < 1 + rnd.nextInt(4); k++) {
                bad[4 + rnd.nextInt(bad.length - 4)] = (byte) rnd.nextInt(256);
            }
            try {
                d.decode(ByteBuffer.wrap(bad));
            } catch (DecodeException expected) {
                failures++;
            }
        }
        assertTrue(failures > 100, "corruptions detected: " + failures);
    }

    @Test
    void rejectsOtherEncapsulations() throws Exception {
        MessageDecoder d = sampleDecoder();
        byte[] b = encodeSample(false);
        b[1] = 3;
        DecodeException e = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(b)));
        assertTrue(e.getMessage().contains("PL_CDR_LE"), e.getMessage());
        b[1] = 7;
        DecodeException e2 = assertThrows(DecodeException.class, () -> d.decode(ByteBuffer.wrap(b)));
        assertTrue(e2.getMessage().contains("XCDR2"), e2.getMessage());
    }

    @Test
    void decodeLeavesTheBufferPositionAndReadsFromIt() throws Exception {
        byte[] msg = encodeSample(true);
        byte[] padded = new byte[msg.length + 10];
        System.arraycopy(msg, 0, padded, 7, msg.length);
        ByteBuffer b = ByteBuffer.wrap(padded, 7, msg.length);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) sampleDecoder().decode(b);
        assertEquals("hello", m.get("greeting"));
        assertEquals(7, b.position());
        // a direct (off-heap) buffer as well
        ByteBuffer direct = ByteBuffer.allocateDirect(msg.length).put(msg).flip();
        @SuppressWarnings("unchecked")
        Map<String, Object> m2 = (Map<String, Object>) sampleDecoder().decode(direct);
        assertEquals("base_link", ((Map<?, ?>) m2.get("header")).get("frame_id"));
    }

    static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
