package io.flywheel.ros.cdr;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * Short strings come from a shared cache in {@link CdrReader}: whatever the cache holds, every
 * decoded string must equal the UTF-8 decoding of its own bytes, in either byte order, on the
 * first read and on every repeat.
 */
class CdrStringCacheTest {

    /** Strings that stress the cache: every length 0..80, shared 8-byte prefixes, mirrored bytes, UTF-8. */
    static List<String> strings() {
        List<String> out = new ArrayList<>();
        Random rnd = new Random(7);
        for (int len = 0; len <= 80; len++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < len; i++) {
                sb.append((char) ('a' + rnd.nextInt(26)));
            }
            out.add(sb.toString());
        }
        out.add("abcdefgh");
        out.add("hgfedcba"); // the same bytes read as a word in the other byte order
        out.add("left_arm_joint_1");
        out.add("left_arm_joint_2");
        out.add("left_arm_joint_10");
        out.add("rgb8; jpeg compressed bgr8");
        out.add("Gelenk_ü_€_😀");
        return out;
    }

    @Test
    void decodedStringsEqualTheirBytesInBothByteOrders() throws Exception {
        List<String> all = strings();
        for (int round = 0; round < 3; round++) {
            for (boolean bigEndian : new boolean[] {false, true}) {
                CdrTestWriter w = new CdrTestWriter(bigEndian).i32(1).u32(2).string("frame").u32(all.size());
                for (String s : all) {
                    w.string(s);
                }
                w.u32(0).u32(0).u32(0);
                CdrFastPaths.JointState js = CdrFastPaths.jointState(ByteBuffer.wrap(w.bytes()));
                assertEquals(all, js.names(), "round " + round + (bigEndian ? " BE" : " LE"));
                assertEquals("frame", js.frameId());
            }
        }
    }

    @Test
    void invalidUtf8IsReplacedAsBefore() throws Exception {
        byte[] bad = {'o', 'k', (byte) 0xC3, (byte) 0x28, 'x'};
        String expected = new String(bad, StandardCharsets.UTF_8); // U+FFFD for the broken sequence
        for (int round = 0; round < 2; round++) {
            byte[] msg = new CdrTestWriter(false).i32(0).u32(0).string("").u32(1).u32(bad.length + 1).raw(bad)
                    .raw((byte) 0).u32(0).u32(0).u32(0).bytes();
            assertEquals(List.of(expected), CdrFastPaths.jointState(ByteBuffer.wrap(msg)).names());
        }
    }
}
