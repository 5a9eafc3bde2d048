package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import io.flywheel.decode.DecodeException;

/** Hand-built CDR foxglove_msgs/msg/CompressedVideo messages: where the access unit lies, stamp and format. */
class CompressedVideoLayoutTest {
    /** timestamp {sec, nanosec}, frame_id, uint8[] data, format (XCDR1: strings and sequence lengths aligned to 4). */
    private static byte[] message(boolean bigEndian, int sec, int nanosec, String frameId, byte[] data, String format) {
        ByteBuffer b = ByteBuffer.allocate(256).order(bigEndian ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {0, (byte) (bigEndian ? 0 : 1), 0, 0});
        b.putInt(sec).putInt(nanosec);
        string(b, frameId);
        align(b);
        b.putInt(data.length).put(data);
        align(b);
        string(b, format);
        return Arrays.copyOf(b.array(), b.position());
    }

    private static void string(ByteBuffer b, String s) {
        byte[] x = s.getBytes(StandardCharsets.UTF_8);
        b.putInt(x.length + 1).put(x).put((byte) 0);
    }

    private static void align(ByteBuffer b) {
        while ((b.position() - 4) % 4 != 0) b.put((byte) 0);
    }

    @Test
    void locatesTheAccessUnitInBothByteOrders() throws DecodeException {
        byte[] au = {0, 0, 0, 1, 0x65, 1, 2, 3, 4}; // 9 bytes: the format string after it needs 3 bytes of padding
        for (boolean be : new boolean[] {false, true}) {
            byte[] m = message(be, 12, 345, "cam", au, "h264");
            CdrImageLayout.Video v = CdrImageLayout.video(ByteBuffer.wrap(m));
            assertEquals(12_000_000_345L, v.stampNs());
            assertEquals("h264", v.format());
            assertEquals(au.length, v.length());
            // header 4 + time 8 + frame_id (4 + 4 bytes "cam\0") + length 4 = 24
            assertEquals(24, v.offset());
            assertArrayEquals(au, Arrays.copyOfRange(m, v.offset(), v.offset() + v.length()));
        }
    }

    @Test
    void truncatedMessagesNameTheField() {
        byte[] m = message(false, 1, 2, "cam", new byte[] {0, 0, 1, 0x65, 9}, "h265");
        for (int len = 0; len < m.length; len++) {
            byte[] cut = Arrays.copyOf(m, len);
            DecodeException e = assertThrows(DecodeException.class, () -> CdrImageLayout.video(ByteBuffer.wrap(cut)),
                    "length " + len);
            assertTrue(e.getMessage().contains("foxglove_msgs/msg/CompressedVideo"), e.getMessage());
        }
    }

    @Test
    void compressedVideoIsACamera() {
        for (String t : new String[] {"foxglove_msgs/msg/CompressedVideo", "foxglove.CompressedVideo"}) {
            assertEquals(StreamRole.CAMERA, RobotProfile.guess("/cam/video", t).role(), t);
        }
        assertEquals("h264", McapSource.normaliseFormat("AVC"));
        assertEquals("h265", McapSource.normaliseFormat("hevc"));
        assertEquals("h264", McapSource.normaliseFormat("h264"));
    }
}
