package io.flywheel.ros.cdr;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
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
import io.flywheel.ros.msgdef.PrimitiveType;

/**
 * Decodes ROS 2 messages serialized as XCDR1 plain CDR (OMG DDS-XTypes 1.3 section 7.4.1; the
 * format of rmw_fastrtps and rmw_cyclonedds and of MCAP message encoding {@code cdr}) into
 * {@link MessageDecoder}'s tree.
 *
 * <p>The schema is compiled once into a plan of small readers, one per field, so decoding does no
 * type-name lookups or reflection. Layout: 4-byte encapsulation header ({@code 00 00} big-endian,
 * {@code 00 01} little-endian; parameter-list and XCDR2 encapsulations are rejected), each
 * primitive aligned to its size (8-byte types to 8) from the first byte after the header, strings
 * as uint32 length including the NUL terminator then UTF-8 bytes, sequences ({@code T[]},
 * {@code T[<=N]}) as uint32 count then elements, fixed arrays ({@code T[N]}) without a count, a
 * message with zero fields as one placeholder byte, time/duration as int32 sec + uint32 nanosec,
 * wstring as uint32 character count then 4-byte code points (Fast-CDR's layout).
 *
 * <p>Every read is bounds-checked. A sequence count is checked against the bytes left (times the
 * element's minimum size) before anything is allocated; bounded sequences and strings are checked
 * against their bound. Trailing bytes after the last field are ignored, as CDR allows. Errors are
 * {@link DecodeException}s naming the type, the field path ({@code header.frame_id},
 * {@code transforms[2].transform.rotation.w}) and the byte offset from the start of the message
 * (header included).
 *
 * <p>Immutable and thread-safe.
 */
public final class CdrDecoder implements MessageDecoder {
    private final String typeName;
    private final Node root;

    private CdrDecoder(String typeName, Node root) {
        this.typeName = typeName;
        this.root = root;
    }

    /**
     * Compiles a decoder for a schema's root type.
     *
     * @param schema a ROS 2 schema ({@link Dialect#ROS2}), from
     *     {@link io.flywheel.ros.msgdef.MsgDefParser} or {@link io.flywheel.ros.msgdef.IdlParser}
     * @return the decoder
     * @throws DecodeException when the schema is ROS 1 or its types are recursive
     */
    public static CdrDecoder create(MessageSchema schema) throws DecodeException {
        if (schema.dialect() != Dialect.ROS2) {
            throw new DecodeException("CDR decoder for " + schema.rootName() + ": schema dialect is " + schema.dialect()
                    + "; CDR messages need a ROS 2 schema");
        }
        Compiler c = new Compiler(schema);
        return new CdrDecoder(schema.rootName(), c.struct(schema.root(), true));
    }

    /** @return the root type's name */
    public String typeName() {
        return typeName;
    }

    /**
     * {@inheritDoc}
     *
     * @param data one CDR message including its 4-byte encapsulation header, from position to
     *     limit; not modified
     * @return a {@code LinkedHashMap<String, Object>} tree as described in {@link MessageDecoder}
     * @throws DecodeException when the header is unsupported or the bytes end early or hold a
     *     count or string length that cannot fit
     */
    @Override
    public Object decode(ByteBuffer data) throws DecodeException {
        CdrReader r = CdrReader.open(data, typeName);
        try {
            return root.read(r);
        } catch (CdrError e) {
            throw failure(typeName, r, e);
        } catch (IndexOutOfBoundsException e) {
            // defensive: every read is checked above, so this would be a bug; still report it as bad input
            throw new DecodeException("CDR " + typeName + ": read past the end at byte offset " + r.offset()
                    + " of " + (r.end - r.start), e);
        }
    }

    /**
     * Decodes a message and counts the bytes after its last field: 0 to 3 are alignment padding that
     * serializers append; more say the schema describes fewer fields than the message holds (a wrong
     * or truncated definition), which {@link #decode} tolerates, as CDR allows trailing bytes.
     *
     * @param data one CDR message including its 4-byte encapsulation header; not modified
     * @return bytes left after the last field
     * @throws DecodeException as {@link #decode}
     */
    public int unreadBytes(ByteBuffer data) throws DecodeException {
        CdrReader r = CdrReader.open(data, typeName);
        try {
            root.read(r);
            return r.remaining();
        } catch (CdrError e) {
            throw failure(typeName, r, e);
        } catch (IndexOutOfBoundsException e) {
            throw new DecodeException("CDR " + typeName + ": read past the end at byte offset " + r.offset()
                    + " of " + (r.end - r.start), e);
        }
    }

    static DecodeException failure(String typeName, CdrReader r, CdrError e) {
        return new DecodeException("CDR " + typeName + ": field " + e.pathString() + " at byte offset " + e.offset
                + " (message is " + (r.end - r.start) + " bytes): " + e.getMessage());
    }

    // ------------------------------------------------------------------ plan

    /** One step of the plan: reads one value (a field, an element or a whole message). */
    abstract static class Node {
        /** the fewest bytes a value can take, ignoring alignment (at least 1 for messages) */
        final int minSize;

        Node(int minSize) {
            this.minSize = minSize;
        }

        abstract Object read(CdrReader r);
    }

    private static final class StructNode extends Node {
        private final String[] names;
        private Node[] fields;
        private final boolean root;
        private final int capacity;

        StructNode(String[] names, int minSize, boolean root) {
            super(minSize);
            this.names = names;
            this.root = root;
            this.capacity = (int) (names.length / 0.75f) + 1;
        }

        @Override
        Object read(CdrReader r) {
            LinkedHashMap<String, Object> m = new LinkedHashMap<>(capacity);
            if (names.length == 0) {
                // ROS 2 serializes an empty message as one placeholder uint8
                // (structure_needs_at_least_one_member); tolerate its absence at the end of a root message
                if (!(root && r.remaining() == 0)) {
                    r.int8();
                }
                return m;
            }
            Node[] f = fields;
            for (int i = 0; i < f.length; i++) {
                try {
                    m.put(names[i], f[i].read(r));
                } catch (CdrError e) {
                    throw e.push(names[i]);
                }
            }
            return m;
        }
    }

    private static final class ScalarNode extends Node {
        private final PrimitiveType type;
        private final int stringBound;

        ScalarNode(PrimitiveType type, int stringBound) {
            super(type.size() == 0 ? 4 : type.size());
            this.type = type;
            this.stringBound = stringBound;
        }

        @Override
        Object read(CdrReader r) {
            return readScalar(r, type, stringBound);
        }
    }

    static Object readScalar(CdrReader r, PrimitiveType type, int stringBound) {
        switch (type) {
            case BOOL:
                return r.int8() != 0;
            case INT8:
                return (int) r.int8();
            case BYTE:
            case CHAR:
            case UINT8:
                return r.int8() & 0xFF;
            case INT16:
                return (int) r.int16();
            case UINT16:
                return r.int16() & 0xFFFF;
            case INT32:
                return r.int32();
            case UINT32:
                return r.int32() & 0xFFFF_FFFFL;
            case INT64:
                return r.int64();
            case UINT64:
                return uint64(r.int64());
            case FLOAT32:
                return r.float32();
            case FLOAT64:
                return r.float64();
            case STRING:
                return r.string(stringBound);
            case WSTRING:
                return r.wstring(stringBound);
            case TIME:
            case DURATION: {
                LinkedHashMap<String, Object> t = new LinkedHashMap<>(4);
                try {
                    t.put("sec", r.int32());
                } catch (CdrError e) {
                    throw e.push("sec");
                }
                try {
                    t.put("nanosec", r.int32() & 0xFFFF_FFFFL);
                } catch (CdrError e) {
                    throw e.push("nanosec");
                }
                return t;
            }
            default:
                throw r.error("unsupported type " + type);
        }
    }

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    static Object uint64(long v) {
        return v >= 0 ? (Object) v : BigInteger.valueOf(v).add(TWO_64);
    }

    /** Arrays of 1-byte integers: {@code byte[]}. */
    private static final class BytesNode extends Node {
        private final ArrayKind kind;
        private final int length;

        BytesNode(ArrayKind kind, int length) {
            super(kind == ArrayKind.FIXED ? length : 4);
            this.kind = kind;
            this.length = length;
        }

        @Override
        Object read(CdrReader r) {
            int n = kind == ArrayKind.FIXED ? length : r.count(1, kind == ArrayKind.BOUNDED ? length : -1);
            return r.bytes(n);
        }
    }

    /** Arrays of fixed-size numbers and bools: aligned once, then read in a tight loop. */
    private static final class NumericArrayNode extends Node {
        private final PrimitiveType type;
        private final ArrayKind kind;
        private final int length;

        NumericArrayNode(PrimitiveType type, ArrayKind kind, int length) {
            super(kind == ArrayKind.FIXED ? length * type.size() : 4);
            this.type = type;
            this.kind = kind;
            this.length = length;
        }

        @Override
        Object read(CdrReader r) {
            int size = type.size();
            int n;
            if (kind == ArrayKind.FIXED) {
                n = length;
            } else {
                n = r.count(size, kind == ArrayKind.BOUNDED ? length : -1);
            }
            if (n == 0) {
                return new ArrayList<>(0);
            }
            int at = r.offset();
            r.align(size);
            r.checkFits(n, size, at);
            ByteBuffer b = r.buf;
            int p = r.pos;
            Object[] out = new Object[n];
            switch (type) {
                case BOOL -> { for (int i = 0; i < n; i++, p += 1) out[i] = b.get(p) != 0; }
                case INT16 -> { for (int i = 0; i < n; i++, p += 2) out[i] = (int) b.getShort(p); }
                case UINT16 -> { for (int i = 0; i < n; i++, p += 2) out[i] = b.getShort(p) & 0xFFFF; }
                case INT32 -> { for (int i = 0; i < n; i++, p += 4) out[i] = b.getInt(p); }
                case UINT32 -> { for (int i = 0; i < n; i++, p += 4) out[i] = b.getInt(p) & 0xFFFF_FFFFL; }
                case INT64 -> { for (int i = 0; i < n; i++, p += 8) out[i] = b.getLong(p); }
                case UINT64 -> { for (int i = 0; i < n; i++, p += 8) out[i] = uint64(b.getLong(p)); }
                case FLOAT32 -> { for (int i = 0; i < n; i++, p += 4) out[i] = b.getFloat(p); }
                case FLOAT64 -> { for (int i = 0; i < n; i++, p += 8) out[i] = b.getDouble(p); }
                default -> throw r.error("unsupported numeric array type " + type);
            }
            r.pos = p;
            return Arrays.asList(out);
        }
    }

    /** Arrays of strings, times or messages: one element reader per element. */
    private static final class ElementArrayNode extends Node {
        private final Node element;
        private final ArrayKind kind;
        private final int length;

        ElementArrayNode(Node element, ArrayKind kind, int length) {
            super(kind == ArrayKind.FIXED ? (int) Math.min(Integer.MAX_VALUE, (long) length * element.minSize) : 4);
            this.element = element;
            this.kind = kind;
            this.length = length;
        }

        @Override
        Object read(CdrReader r) {
            int n;
            if (kind == ArrayKind.FIXED) {
                n = length;
                r.checkFits(n, element.minSize, r.offset());
            } else {
                n = r.count(element.minSize, kind == ArrayKind.BOUNDED ? length : -1);
            }
            List<Object> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                try {
                    out.add(element.read(r));
                } catch (CdrError e) {
                    throw e.push("[" + i + "]");
                }
            }
            return out;
        }
    }

    // ------------------------------------------------------------------ compiler

    private static final class Compiler {
        private final MessageSchema schema;
        private final Map<String, StructNode> done = new HashMap<>();
        private final Set<String> inProgress = new HashSet<>();

        Compiler(MessageSchema schema) {
            this.schema = schema;
        }

        StructNode struct(MessageDefinition def, boolean root) throws DecodeException {
            String key = MessageSchema.key(def.name());
            if (!root) {
                StructNode existing = done.get(key);
                if (existing != null) {
                    return existing;
                }
            }
            if (!inProgress.add(key)) {
                throw new DecodeException("CDR decoder for " + schema.rootName() + ": type " + def.name()
                        + " contains itself; recursive message types cannot be serialized");
            }
            List<Field> fields = def.fields();
            String[] names = new String[fields.size()];
            Node[] nodes = new Node[fields.size()];
            long min = 0;
            for (int i = 0; i < nodes.length; i++) {
                Field f = fields.get(i);
                names[i] = f.name();
                nodes[i] = field(f);
                min += nodes[i].minSize;
            }
            StructNode s = new StructNode(names, (int) Math.max(1, Math.min(Integer.MAX_VALUE, min)), root);
            s.fields = nodes;
            inProgress.remove(key);
            if (!root) {
                done.put(key, s);
            }
            return s;
        }

        private Node field(Field f) throws DecodeException {
            Node element;
            PrimitiveType p = f.type().primitive();
            if (p == null) {
                MessageDefinition d = schema.definition(f.type().typeName());
                if (d == null) {
                    throw new DecodeException("CDR decoder for " + schema.rootName() + ": type " + f.type()
                            + " of field " + f.name() + " is not in the schema");
                }
                element = struct(d, false);
            } else {
                if (f.isArray() && p.isByteLike()) {
                    return new BytesNode(f.arrayKind(), f.arrayLength());
                }
                if (f.isArray() && p.size() > 0 && p != PrimitiveType.TIME && p != PrimitiveType.DURATION) {
                    return new NumericArrayNode(p, f.arrayKind(), f.arrayLength());
                }
                element = new ScalarNode(p, f.stringBound());
            }
            if (!f.isArray()) {
                return element;
            }
            return new ElementArrayNode(element, f.arrayKind(), f.arrayLength());
        }
    }
}
