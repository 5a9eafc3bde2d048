package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Set;

import org.junit.jupiter.api.Test;

class RowKeysTest {
    @Test
    void findsEveryRowByItsTwoKeysAndNothingElse() {
        RowKeys k = new RowKeys();
        // episode a: frames 5, 0, 3 (out of order), episode b: frame 0, then a again: frame 40 (past the first
        // array's 16 entries once grown, see below)
        k.add("a", 5, 0);
        k.add("a", 0, 1);
        k.add("b", 0, 2);
        k.add("a", 3, 3);
        for (int j = 0; j < 40; j++) {
            k.add("c", 1000 + j, 4 + j);
        }
        assertEquals(-1, k.seal());
        assertEquals(Set.of("a", "b", "c"), k.partitions());
        long[] a = k.group("a");
        assertEquals(1, RowKeys.find(a, 0));
        assertEquals(3, RowKeys.find(a, 3));
        assertEquals(0, RowKeys.find(a, 5));
        assertEquals(-1, RowKeys.find(a, 4));
        assertEquals(-1, RowKeys.find(a, 6));
        assertEquals(-1, RowKeys.find(a, -1));
        assertEquals(2, RowKeys.find(k.group("b"), 0));
        assertEquals(4 + 39, RowKeys.find(k.group("c"), 1039));
        assertNull(k.group("d"));
    }

    @Test
    void tableWithoutSecondaryKeyUsesMinusOne() {
        RowKeys k = new RowKeys();
        k.add("ep-1", -1, 0);
        k.add("ep-2", -1, 1);
        assertEquals(-1, k.seal());
        assertEquals(1, RowKeys.find(k.group("ep-2"), -1));
    }

    @Test
    void aRowNamedTwiceIsReported() {
        RowKeys k = new RowKeys();
        k.add("a", 1, 0);
        k.add("a", 2, 1);
        k.add("a", 1, 2);
        assertEquals(2, k.seal());
    }
}
