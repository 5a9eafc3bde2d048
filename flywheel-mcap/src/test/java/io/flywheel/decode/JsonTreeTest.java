package io.flywheel.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class JsonTreeTest {

    @Test
    void normalisesAsDocumented() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("i", -7);
        m.put("u32", 4_294_967_295L);
        m.put("i64", Long.MIN_VALUE);
        m.put("u64", new BigInteger("18446744073709551615"));
        m.put("f", 0.1f);
        m.put("d", 0.1);
        m.put("nan", Float.NaN);
        m.put("inf", Double.POSITIVE_INFINITY);
        m.put("ninf", Double.NEGATIVE_INFINITY);
        m.put("bytes", new byte[] {0, 127, -128, -1});
        m.put("buf", ByteBuffer.wrap(new byte[] {9, -2}));
        m.put("list", Arrays.asList(1.5f, null, true, "s\"q"));
        m.put("time", Map.of("sec", 1));
        assertEquals("{\"i\":-7,\"u32\":\"4294967295\",\"i64\":\"-9223372036854775808\",\"u64\":\"18446744073709551615\","
                + "\"f\":0.10000000149011612,\"d\":0.1,\"nan\":\"NaN\",\"inf\":\"Infinity\",\"ninf\":\"-Infinity\","
                + "\"bytes\":[0,127,128,255],\"buf\":[9,254],\"list\":[1.5,null,true,\"s\\\"q\"],\"time\":{\"sec\":1}}",
                JsonTree.toJson(m));
        assertEquals("[0.5,\"NaN\"]", JsonTree.toJson(new double[] {0.5, Double.NaN}));
        assertEquals("[\"1\"]", JsonTree.toJson(new long[] {1}));
        assertEquals("[]", JsonTree.toJson(List.of()));
    }

    @Test
    void rejectsForeignTypes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JsonTree.toJson(new Object()));
        assertTrue(e.getMessage().contains("java.lang.Object"));
    }
}
