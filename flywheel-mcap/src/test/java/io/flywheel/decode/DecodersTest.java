package io.flywheel.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.junit.jupiter.api.Test;

class DecodersTest {

    @Test
    void cdrWithRos2msg() throws Exception {
        MessageDecoder d = Decoders.forSchema("cdr", "std_msgs/msg/String", "ros2msg",
                "string data".getBytes(StandardCharsets.UTF_8));
        byte[] msg = {0, 1, 0, 0, 3, 0, 0, 0, 'h', 'i', 0};
        assertEquals(Map.of("data", "hi"), d.decode(ByteBuffer.wrap(msg)));
    }

    @Test
    void unknownEncodingsAreNamed() {
        DecodeException e = assertThrows(DecodeException.class,
                () -> Decoders.forSchema("flatbuffer", "x.Y", "flatbuffer", new byte[0]));
        assertTrue(e.getMessage().contains("'flatbuffer'") && e.getMessage().contains("x.Y"), e.getMessage());
        DecodeException e2 = assertThrows(DecodeException.class,
                () -> Decoders.forSchema("cdr", "a/msg/B", "omgidl", new byte[0]));
        assertTrue(e2.getMessage().contains("'omgidl'"), e2.getMessage());
        DecodeException e3 = assertThrows(DecodeException.class,
                () -> Decoders.forSchema("cdr", "a/msg/B", "ros2msg", new byte[] {(byte) 0xC3, 0x28}));
        assertTrue(e3.getMessage().contains("UTF-8"), e3.getMessage());
    }
}
