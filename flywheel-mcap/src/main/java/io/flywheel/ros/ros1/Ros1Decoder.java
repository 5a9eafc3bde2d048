package io.flywheel.ros.ros1;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.ros.msgdef.ArrayKind;
import io.flywheel.ros.msgdef.Dialect;
import io.flywheel.ros.msgdef.Field;
import io.flywheel.ros.msgdef.MessageDefinition;
import io.flywheel.ros.msgdef.MessageSchema;
import io.flywheel.ros.msgdef.MsgDefParser;
import io.flywheel.ros.msgdef.PrimitiveType;

/**
 * Decodes ROS 1 serialized messages (http://wiki.ros.org/msg and
 * http://wiki.ros.org/ROS/Message_Serialization; the payload of bag message records and of MCAP
 * messages with encoding {@code ros1}) into the tree of {@link MessageDecoder}.
 *
 * <p>Wire format: little-endian, no alignment or padding; bool, int8/uint8 (and the aliases byte =
 * int8, char = uint8) 1 byte, int16/uint16 2, int32/uint32/float32 4, int64/uint64/float64 8;
 * string: uint32 byte length then the bytes (no terminating NUL), read as UTF-8 (malformed bytes
 * become U+FFFD); variable array: uint32 element count then the elements; fixed array {@code [N]}:
 * N elements, no count; time: uint32 sec, uint32 nsec; duration: int32 sec, int32 nsec; a nested
 * message: its fields in order. {@code std_msgs/Header} is an ordinary message (uint32 seq, time
 * stamp, string frame_id).
 *
 * <p>Tree: as {@link MessageDecoder} says; time is a map {@code {sec: Long, nsec: Long}} (both
 * uint32), duration a map {@code {sec: Integer, nsec: Integer}} (both int32). The definition is
 * parsed by {@link MsgDefParser} ({@link Dialect#ROS1}) and compiled once into a plan of field
 * readers; a decoder is immutable and thread-safe.
 *
 * <p>Errors: a {@link DecodeException} naming the type, the field path and the byte offset when a
 * field runs past the end of the message, an array count exceeds what the bytes left can hold, or
 * bytes are left over after the last field (the definition does not match the data).
 */
public final class Ros1Decoder implements MessageDecoder {
    /** Most elements accepted in an array whose elements take no bytes (messages with no fields). */
    private static final long MAX_EMPTY_ELEMENTS = 1 << 20;

    private final String type;
    private final Reader root;

    private Ros1Decoder(String type, Reader root) {
        this.type = type;
        this.root = root;
    }

    /**
     * Builds a decoder from a ROS 1 message definition.
     *
     * @param type the root type, {@code pkg/Type}, e.g. {@code turtlesim/Pose}
     * @param messageDefinitionText the full definition (root text, then {@code MSG:} sections), as
     *     in a bag connection's {@code message_definition} or an MCAP {@code ros1msg} schema
     * @return the decoder
     * @throws DecodeException when the text cannot be parsed, a used type is not defined in it,
     *     types nest recursively, or a field uses ROS 2 only syntax (wstring, {@code string<=N},
     *     {@code T[<=N]})
     */
    public static Ros1Decoder forDefinition(String type, String messageDefinitionText) throws DecodeException {
        MessageSchema schema = MsgDefParser.parse(type, messageDefinitionText, Dialect.ROS1);
        return new Ros1Decoder(type, compileMessagePlan(schema, schema.root(), "", new HashSet<>(), type).reader());
    }

    /**
     * Factory for the registry: MCAP message encoding {@code ros1}, schema encoding {@code ros1msg}.
     *
     * @param schemaName the root type, e.g. {@code turtlesim/Pose}
     * @param schemaData the definition text, UTF-8
     * @return the decoder
     * @throws DecodeException as {@link #forDefinition(String, String)}
     */
    public static MessageDecoder forSchema(String schemaName, byte[] schemaData) throws DecodeException {
        return forDefinition(schemaName, new String(schemaData, StandardCharsets.UTF_8));
    }

    /** @return the root type this decoder was built for */
    public String type() {
        return type;
    }

    /**
     * @param data one ROS 1 serialized message, from position to limit; the position is not changed
     * @return a {@code LinkedHashMap<String, Object>} in field order
     * @throws DecodeException when the bytes do not match the definition (type, field, offset)
     */
    @Override
    public Object decode(ByteBuffer data) throws DecodeException {
        Cursor c = new Cursor(data.slice().order(ByteOrder.LITTLE_ENDIAN), type);
        Object value = root.read(c);
        if (c.b.hasRemaining()) {
            throw new DecodeException(type + ": " + c.b.remaining() + " bytes left after the last field, at byte "
                    + c.b.position() + " of " + c.b.limit() + " (the definition does not match the data)");
        }
        return value;
    }

    // ------------------------------------------------------------------ plan

    /** One step of the plan: reads a value at the cursor. */
    private interface Reader {
        Object read(Cursor c) throws DecodeException;
    }

    /** A compiled reader and the fewest bytes one value takes. */
    private record Plan(Reader reader, long minSize) {}

    private static final class Cursor {
        final ByteBuffer b;
        final String type;

        Cursor(ByteBuffer b, String type) {
            this.b = b;
            this.type = type;
        }

        void need(long n, String path, String what) throws DecodeException {
            if (n > b.remaining()) {
                throw new DecodeException(type + " field '" + path + "' (" + what + ") at byte " + b.position()
                        + ": needs " + n + " bytes, " + b.remaining() + " left of " + b.limit());
            }
        }
    }

    private static Plan compileMessagePlan(MessageSchema schema, MessageDefinition t, String prefix,
                                           Set<String> active, String rootType) throws DecodeException {
        String key = MessageSchema.key(t.name());
        if (!active.add(key)) {
            throw new DecodeException(rootType + " definition nests " + t.name() + " inside itself");
        }
        int n = t.fields().size();
        String[] names = new String[n];
        Reader[] readers = new Reader[n];
        long min = 0;
        for (int i = 0; i < n; i++) {
            Field f = t.fields().get(i);
            names[i] = f.name();
            Plan p = compileField(schema, f, prefix + f.name(), active, rootType);
            readers[i] = p.reader();
            min += p.minSize();
        }
        active.remove(key);
        Reader r = c -> {
            Map<String, Object> m = new LinkedHashMap<>(Math.max(4, n * 2));
            for (int i = 0; i < n; i++) {
                m.put(names[i], readers[i].read(c));
            }
            return m;
        };
        return new Plan(r, min);
    }

    private static Plan compileField(MessageSchema schema, Field f, String path, Set<String> active, String rootType)
            throws DecodeException {
        PrimitiveType prim = f.type().primitive();
        if (f.arrayKind() == ArrayKind.BOUNDED || f.stringBound() >= 0 || prim == PrimitiveType.WSTRING) {
            throw new DecodeException(rootType + " definition, field '" + path + "' (" + f
                    + "): wstring, string<=N and T[<=N] are ROS 2 types, not ROS 1");
        }
        Plan element;
        if (prim != null) {
            element = primitive(prim, path);
        } else {
            MessageDefinition def = schema.definition(f.type().typeName());
            if (def == null) {
                throw new DecodeException(rootType + " definition does not define " + f.type().typeName());
            }
            element = compileMessagePlan(schema, def, path + (f.isArray() ? "[]." : "."), active, rootType);
        }
        if (!f.isArray()) {
            return element;
        }
        boolean bytes = prim != null && prim.isByteLike();
        String w = (prim != null ? prim.rosName() : f.type().typeName())
                + "[" + (f.arrayKind() == ArrayKind.FIXED ? f.arrayLength() : "") + "]";
        long elemMin = element.minSize();
        Reader er = element.reader();
        if (f.arrayKind() == ArrayKind.FIXED) {
            int len = f.arrayLength();
            Reader r = bytes ? c -> {
                c.need(len, path, w);
                byte[] out = new byte[len];
                c.b.get(out);
                return out;
            } : c -> {
                c.need(elemMin * len, path, w);
                List<Object> out = new ArrayList<>(len);
                for (int i = 0; i < len; i++) {
                    out.add(er.read(c));
                }
                return out;
            };
            return new Plan(r, elemMin * len);
        }
        Reader r = c -> {
            c.need(4, path, w + " count");
            int at = c.b.position();
            long count = Integer.toUnsignedLong(c.b.getInt());
            if (elemMin == 0 ? count > MAX_EMPTY_ELEMENTS : count * elemMin > c.b.remaining()) {
                throw new DecodeException(c.type + " field '" + path + "' (" + w + ") at byte " + at
                        + ": count " + count + " needs at least " + count * elemMin + " bytes, "
                        + c.b.remaining() + " left");
            }
            if (bytes) {
                byte[] out = new byte[(int) count];
                c.b.get(out);
                return out;
            }
            List<Object> out = new ArrayList<>((int) count);
            for (long i = 0; i < count; i++) {
                out.add(er.read(c));
            }
            return out;
        };
        return new Plan(r, 4);
    }

    private static Plan primitive(PrimitiveType p, String path) {
        String type = p.rosName();
        return switch (p) {
            case BOOL -> new Plan(c -> {
                c.need(1, path, type);
                return c.b.get() != 0;
            }, 1);
            case INT8, BYTE -> new Plan(c -> {
                c.need(1, path, type);
                return (int) c.b.get();
            }, 1);
            case UINT8, CHAR -> new Plan(c -> {
                c.need(1, path, type);
                return Byte.toUnsignedInt(c.b.get());
            }, 1);
            case INT16 -> new Plan(c -> {
                c.need(2, path, type);
                return (int) c.b.getShort();
            }, 2);
            case UINT16 -> new Plan(c -> {
                c.need(2, path, type);
                return Short.toUnsignedInt(c.b.getShort());
            }, 2);
            case INT32 -> new Plan(c -> {
                c.need(4, path, type);
                return c.b.getInt();
            }, 4);
            case UINT32 -> new Plan(c -> {
                c.need(4, path, type);
                return Integer.toUnsignedLong(c.b.getInt());
            }, 4);
            case INT64 -> new Plan(c -> {
                c.need(8, path, type);
                return c.b.getLong();
            }, 8);
            case UINT64 -> new Plan(c -> {
                c.need(8, path, type);
                long v = c.b.getLong();
                return v >= 0 ? (Object) v : new BigInteger(Long.toUnsignedString(v));
            }, 8);
            case FLOAT32 -> new Plan(c -> {
                c.need(4, path, type);
                return c.b.getFloat();
            }, 4);
            case FLOAT64 -> new Plan(c -> {
                c.need(8, path, type);
                return c.b.getDouble();
            }, 8);
            case STRING -> new Plan(c -> {
                c.need(4, path, "string length");
                int at = c.b.position();
                long len = Integer.toUnsignedLong(c.b.getInt());
                if (len > c.b.remaining()) {
                    throw new DecodeException(c.type + " field '" + path + "' (string) at byte " + at
                            + ": length " + len + " runs past the end, " + c.b.remaining() + " bytes left");
                }
                byte[] s = new byte[(int) len];
                c.b.get(s);
                return new String(s, StandardCharsets.UTF_8);
            }, 4);
            case TIME -> new Plan(c -> {
                c.need(8, path, type);
                Map<String, Object> m = new LinkedHashMap<>(4);
                m.put("sec", Integer.toUnsignedLong(c.b.getInt()));
                m.put("nsec", Integer.toUnsignedLong(c.b.getInt()));
                return m;
            }, 8);
            case DURATION -> new Plan(c -> {
                c.need(8, path, type);
                Map<String, Object> m = new LinkedHashMap<>(4);
                m.put("sec", c.b.getInt());
                m.put("nsec", c.b.getInt());
                return m;
            }, 8);
            case WSTRING -> throw new IllegalStateException("wstring is rejected before this point");
        };
    }
}
