package io.flywheel.ros.msgdef;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.flywheel.decode.DecodeException;

class IdlParserTest {

    static final String IDL = """
            module demo_msgs {
              module msg {
                typedef double double__9[9];
                typedef double__9 cov_t;
                module Sample_Constants {
                  const uint8 MODE_IDLE = 0;
                  const int32 LIMIT = -42;
                  const string NAME = "sample";
                  const boolean ON = TRUE;
                  const double PI = 3.14;
                };
                struct Sample {
                  @default (value=7)
                  uint8 mode;
                  @default (value=1.5)
                  float gain;
                  @default (value="(1, 2, 3)")
                  sequence<int16, 3> small;
                  @default (value=TRUE)
                  boolean on;
                  @key string<8> id, other;
                  cov_t covariance;
                  wstring<5> w;
                  long l; unsigned short us; short s; long long ll; octet o; char c;
                };
                struct Empty {
                  uint8 structure_needs_at_least_one_member;
                };
              };
            };
            """;

    @Test
    void parsesStructConstantsDefaultsAndTypedefs() throws Exception {
        MessageSchema s = IdlParser.parse("demo_msgs/msg/Sample", IDL);
        MessageDefinition d = s.root();
        assertEquals("demo_msgs/msg/Sample", d.name());
        assertEquals(List.of("mode", "gain", "small", "on", "id", "other", "covariance", "w", "l", "us", "s", "ll", "o", "c"),
                d.fields().stream().map(Field::name).toList());
        assertEquals(7, d.field("mode").defaultValue());
        assertEquals(1.5f, d.field("gain").defaultValue());
        assertEquals(List.of(1, 2, 3), d.field("small").defaultValue());
        assertEquals(ArrayKind.BOUNDED, d.field("small").arrayKind());
        assertEquals(PrimitiveType.INT16, d.field("small").type().primitive());
        assertEquals(true, d.field("on").defaultValue());
        assertEquals(8, d.field("id").stringBound());
        assertEquals(8, d.field("other").stringBound());
        assertEquals(ArrayKind.FIXED, d.field("covariance").arrayKind());
        assertEquals(9, d.field("covariance").arrayLength());
        assertEquals(PrimitiveType.FLOAT64, d.field("covariance").type().primitive());
        assertEquals(PrimitiveType.WSTRING, d.field("w").type().primitive());
        assertEquals(List.of(PrimitiveType.INT32, PrimitiveType.UINT16, PrimitiveType.INT16, PrimitiveType.INT64,
                PrimitiveType.BYTE, PrimitiveType.CHAR),
                List.of("l", "us", "s", "ll", "o", "c").stream().map(n -> d.field(n).type().primitive()).toList());
        assertEquals(List.of(
                new Constant("MODE_IDLE", PrimitiveType.UINT8, 0, "0"),
                new Constant("LIMIT", PrimitiveType.INT32, -42, "-42"),
                new Constant("NAME", PrimitiveType.STRING, "sample", "\"sample\""),
                new Constant("ON", PrimitiveType.BOOL, true, "TRUE"),
                new Constant("PI", PrimitiveType.FLOAT64, 3.14, "3.14")), d.constants());
        assertEquals(List.of(), s.definition("demo_msgs::msg::Empty").fields());
        assertEquals(List.of(), IdlParser.parse("demo_msgs::msg::Empty", IDL).root().fields());
    }

    @Test
    void errorsNameLine() {
        DecodeException e = assertThrows(DecodeException.class,
                () -> IdlParser.parse("a/msg/B", "module a { module msg {\n struct B {\n  int32 x\n }; }; };"));
        assertTrue(e.getMessage().contains("line 4") && e.getMessage().contains("expected ';'"), e.getMessage());
        DecodeException e2 = assertThrows(DecodeException.class,
                () -> IdlParser.parse("a/msg/B", "module a { module msg { struct B { Missing m; }; }; };"));
        assertTrue(e2.getMessage().contains("a/msg/B.m has type Missing"), e2.getMessage());
        DecodeException e3 = assertThrows(DecodeException.class,
                () -> IdlParser.parse("a/msg/C", "module a { module msg { struct B { int32 x; }; }; };"));
        assertTrue(e3.getMessage().contains("no struct named a/msg/C"), e3.getMessage());
        assertThrows(DecodeException.class,
                () -> IdlParser.parse("a/msg/B", "module a { module msg { struct B { int32 x[2][3]; }; }; };"));
        assertThrows(DecodeException.class,
                () -> IdlParser.parse("a/msg/B", "module a { module msg { enum E { X }; }; };"));
        assertThrows(DecodeException.class, () -> IdlParser.parse("a/msg/B", "module a { /* open"));
        assertThrows(DecodeException.class, () -> IdlParser.parse("a/msg/B", "module a { module msg { struct B { int32 x; };"));
    }
}
