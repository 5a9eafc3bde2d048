package io.flywheel.ros.msgdef;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.flywheel.decode.DecodeException;

class MsgDefParserTest {

    static final String SEP = "=".repeat(80);

    @Test
    void parsesFieldsConstantsDefaultsAndDependencies() throws Exception {
        String text = String.join("\n",
                "# A comment line",
                "std_msgs/Header header   # trailing comment",
                "int32 FOO=1",
                "string S=\"x # not a comment\"",
                "uint64 BIG = 18446744073709551615",
                "int32 x 5",
                "int32[] a [1, 2]",
                "string<=22 name \"Hello world!\"",
                "string[<=3] tags [\"a\", 'b,c']",
                "float64[9] covariance",
                "uint8[<=16] raw",
                "Point p",
                "builtin_interfaces/Duration timeout",
                "",
                SEP,
                "MSG: std_msgs/Header",
                "builtin_interfaces/Time stamp",
                "string frame_id",
                SEP,
                "MSG: demo_msgs/msg/Point",
                "float64 x",
                "float64 y");
        MessageSchema s = MsgDefParser.parse("demo_msgs/msg/Thing", text, Dialect.ROS2);
        MessageDefinition root = s.root();
        assertEquals("demo_msgs/msg/Thing", root.name());
        assertEquals(List.of("header", "x", "a", "name", "tags", "covariance", "raw", "p", "timeout"),
                root.fields().stream().map(Field::name).toList());
        assertEquals(FieldType.message("std_msgs/msg/Header"), root.field("header").type());
        assertEquals(5, root.field("x").defaultValue());
        assertEquals(List.of(1, 2), root.field("a").defaultValue());
        assertEquals(ArrayKind.UNBOUNDED, root.field("a").arrayKind());
        assertEquals(22, root.field("name").stringBound());
        assertEquals("Hello world!", root.field("name").defaultValue());
        assertEquals(ArrayKind.BOUNDED, root.field("tags").arrayKind());
        assertEquals(3, root.field("tags").arrayLength());
        assertEquals(List.of("a", "b,c"), root.field("tags").defaultValue());
        assertEquals(ArrayKind.FIXED, root.field("covariance").arrayKind());
        assertEquals(9, root.field("covariance").arrayLength());
        assertEquals(16, root.field("raw").arrayLength());
        assertEquals(FieldType.message("demo_msgs/msg/Point"), root.field("p").type());
        assertEquals(PrimitiveType.DURATION, root.field("timeout").type().primitive());
        assertNull(root.field("p").defaultValue());

        assertEquals(List.of(
                new Constant("FOO", PrimitiveType.INT32, 1, "1"),
                new Constant("S", PrimitiveType.STRING, "x # not a comment", "\"x # not a comment\""),
                new Constant("BIG", PrimitiveType.UINT64, new BigInteger("18446744073709551615"), "18446744073709551615")),
                root.constants());

        MessageDefinition header = s.definition("std_msgs/Header");
        assertEquals("std_msgs/msg/Header", header.name());
        assertEquals(PrimitiveType.TIME, header.field("stamp").type().primitive());
        assertEquals(header, s.definition("std_msgs/msg/Header"));
        assertEquals(3, s.definitions().size());
    }

    @Test
    void unqualifiedTypesResolveToSamePackageThenHeader() throws Exception {
        String text = String.join("\n",
                "Header header",
                "Point p",
                SEP,
                "MSG: std_msgs/Header",
                "uint32 seq",
                "time stamp",
                "string frame_id",
                SEP,
                "MSG: geometry_msgs/Point",
                "float64 x",
                SEP,
                "MSG: demo/Point",
                "int8 y");
        MessageSchema s = MsgDefParser.parse("demo/Thing", text, Dialect.ROS1);
        assertEquals("std_msgs/Header", s.root().field("header").type().typeName());
        assertEquals("demo/Point", s.root().field("p").type().typeName());
        assertEquals(Dialect.ROS1, s.dialect());
        assertEquals(PrimitiveType.TIME, s.definition("std_msgs/Header").field("stamp").type().primitive());
    }

    @Test
    void ros1BareHeaderIsAlwaysStdMsgsHeaderAndShortNamesFallBack() throws Exception {
        String text = String.join("\n",
                "Header header",
                "Pose pose",
                SEP,
                "MSG: demo/Header",
                "int8 not_the_header",
                SEP,
                "MSG: std_msgs/Header",
                "uint32 seq",
                SEP,
                "MSG: geometry_msgs/Pose",
                "float64 x");
        MessageSchema s = MsgDefParser.parse("demo/Thing", text, Dialect.ROS1);
        assertEquals("std_msgs/Header", s.root().field("header").type().typeName());
        // no demo/Pose section: the one Pose in the text is taken
        assertEquals("geometry_msgs/Pose", s.root().field("pose").type().typeName());
        // ROS 2 keeps its rules: same package first, no short-name fallback
        String ros2 = text.replace("Pose pose\n", "");
        assertEquals("demo/msg/Header", MsgDefParser.parse("demo/Thing", ros2, Dialect.ROS2).root().field("header")
                .type().typeName());
        DecodeException e = assertThrows(DecodeException.class, () -> MsgDefParser.parse("demo/Thing", text, Dialect.ROS2));
        assertTrue(e.getMessage().contains("has type Pose"), e.getMessage());
        // two candidates: ambiguous, rejected
        String twoPoses = text + "\n" + SEP + "\nMSG: other/Pose\nfloat64 y";
        e = assertThrows(DecodeException.class, () -> MsgDefParser.parse("demo/Thing", twoPoses, Dialect.ROS1));
        assertTrue(e.getMessage().contains("demo/Thing.pose has type Pose"), e.getMessage());
    }

    @Test
    void ros1StringConstantsTakeTheRestOfTheLine() throws Exception {
        MessageSchema s = MsgDefParser.parse("a/B", "string S = hello # world\nbyte B=-5\nint8 x", Dialect.ROS1);
        assertEquals("hello # world", s.root().constants().get(0).value());
        assertEquals(-5, s.root().constants().get(1).value());
        // in ROS 2, byte is unsigned
        assertThrows(DecodeException.class, () -> MsgDefParser.parse("a/B", "byte B=-5", Dialect.ROS2));
    }

    @Test
    void emptyMessagesHaveNoFields() throws Exception {
        assertEquals(List.of(), MsgDefParser.parse("std_msgs/msg/Empty", "", Dialect.ROS2).root().fields());
        assertEquals(List.of(), MsgDefParser.parse("test_msgs/msg/Empty", "# nothing\n\n", Dialect.ROS2).root().fields());
        MessageSchema s = MsgDefParser.parse("std_msgs/Empty", null, Dialect.ROS1);
        assertEquals("std_msgs/Empty", s.rootName());
    }

    @Test
    void serviceEventTextBecomesTheEventType() throws Exception {
        MessageSchema s = MsgDefParser.parse("example_interfaces/srv/AddTwoInts_Event",
                "int64 a\nint64 b\n---\nint64 sum\n", Dialect.ROS2);
        MessageDefinition ev = s.root();
        assertEquals(List.of("info", "request", "response"), ev.fields().stream().map(Field::name).toList());
        assertEquals(ArrayKind.BOUNDED, ev.field("request").arrayKind());
        assertEquals(1, ev.field("request").arrayLength());
        assertEquals(List.of("a", "b"), s.definition("example_interfaces/srv/AddTwoInts_Request").fields().stream()
                .map(Field::name).toList());
        assertEquals(List.of("sum"), s.definition(ev.field("response").type().typeName()).fields().stream()
                .map(Field::name).toList());
        assertEquals(List.of("event_type", "stamp", "client_gid", "sequence_number"),
                s.definition("service_msgs/msg/ServiceEventInfo").fields().stream().map(Field::name).toList());
    }

    @Test
    void errorsNameTypeAndLine() {
        DecodeException e = assertThrows(DecodeException.class,
                () -> MsgDefParser.parse("a/msg/B", "int32 x\nint32[ y\n", Dialect.ROS2));
        assertTrue(e.getMessage().contains("a/msg/B, line 2"), e.getMessage());
        DecodeException e2 = assertThrows(DecodeException.class,
                () -> MsgDefParser.parse("a/msg/B", "int32 x\nMissing m\n", Dialect.ROS2));
        assertTrue(e2.getMessage().contains("a/msg/B.m has type Missing"), e2.getMessage());
        DecodeException e3 = assertThrows(DecodeException.class,
                () -> MsgDefParser.parse("a/msg/B", "uint8 X=256", Dialect.ROS2));
        assertTrue(e3.getMessage().contains("out of range"), e3.getMessage());
        DecodeException e4 = assertThrows(DecodeException.class,
                () -> MsgDefParser.parse("a/msg/B", "int32 x\n" + SEP + "\nnot a msg line\n", Dialect.ROS2));
        assertTrue(e4.getMessage().contains("line 3") && e4.getMessage().contains("MSG:"), e4.getMessage());
        assertThrows(DecodeException.class, () -> MsgDefParser.parse("a/msg/B", "int32<=3 x", Dialect.ROS2));
        assertThrows(DecodeException.class, () -> MsgDefParser.parse("a/msg/B", "string s \"unterminated", Dialect.ROS2));
        assertThrows(DecodeException.class, () -> MsgDefParser.parse("", "int32 x", Dialect.ROS2));
    }
}
