package io.flywheel.lake;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * The values of one column of a {@link RowBatch} (or of one child of a nested column), read by position with typed
 * accessors. Positions are rows for a top-level column and item positions for a list's {@link #items()}: row
 * {@code r} of a list column holds the items {@code [listStart(r), listEnd(r))} of its item column, and a struct's
 * {@link #field} columns share the struct's positions. So {@code images[].hot_jpeg} of row {@code r} is
 * {@code batch.column("images").items().field("hot_jpeg")} at {@code listStart(r)..listEnd(r)}.
 *
 * <p>Valid only while the batch is (inside the scan or take callback); the values it returns are copies, except
 * {@link #getBytesView}, which is not. Look a column up once per batch and read its rows in a loop: the accessors do
 * no lookup by name. Not thread-safe.
 *
 * <p>An accessor of the wrong kind (a {@link #getLong} of a utf8 column), or a primitive accessor on a null value,
 * throws {@link LakeFormatException} naming the table, version, column and position and what was expected.
 */
public final class ColumnView {
    private final String source;
    private final String name;
    private final ValueVector vector;
    private final ValueKind kind;

    ColumnView(String source, String name, ValueVector vector) {
        this.source = source;
        this.name = name;
        this.vector = vector;
        this.kind = ArrowTypes.kind(vector.getField().getType());
    }

    /** @return the column's path: its name, then {@code .item} per list level and {@code .field} per struct level */
    public String name() {
        return name;
    }

    /** @return the kind of its values */
    public ValueKind kind() {
        return kind;
    }

    /** @return the column described, children included */
    public ColumnSpec spec() {
        return ArrowTypes.spec(vector.getField());
    }

    /** @return the number of positions (rows, or items of a list column's item column) */
    public int size() {
        return vector.getValueCount();
    }

    /** @return whether the value at position {@code i} is null */
    public boolean isNull(int i) {
        return vector.isNull(i);
    }

    /** @return the utf8 value at {@code i}, or null when it is null */
    public String getString(int i) {
        if (vector instanceof VarCharVector v) {
            return v.isNull(i) ? null : new String(v.get(i), StandardCharsets.UTF_8);
        }
        if (vector instanceof org.apache.arrow.vector.LargeVarCharVector v) {
            return v.isNull(i) ? null : new String(v.get(i), StandardCharsets.UTF_8);
        }
        throw wrong("utf8", i);
    }

    /** @return the 32-bit integer at {@code i} (8- and 16-bit ones widened) */
    public int getInt(int i) {
        notNull(i, "int32");
        if (vector instanceof IntVector v) {
            return v.get(i);
        }
        if (vector instanceof SmallIntVector v) {
            return v.get(i);
        }
        if (vector instanceof TinyIntVector v) {
            return v.get(i);
        }
        throw wrong("int32", i);
    }

    /** @return the 64-bit integer at {@code i} (a 32-bit one widened; an unsigned one as its bits) */
    public long getLong(int i) {
        notNull(i, "int64");
        if (vector instanceof BigIntVector v) {
            return v.get(i);
        }
        if (vector instanceof UInt8Vector v) {
            return v.get(i);
        }
        if (vector instanceof IntVector v) {
            return v.get(i);
        }
        throw wrong("int64", i);
    }

    /** @return the float64 at {@code i} (a float32 widened) */
    public double getDouble(int i) {
        notNull(i, "float64");
        if (vector instanceof Float8Vector v) {
            return v.get(i);
        }
        if (vector instanceof Float4Vector v) {
            return v.get(i);
        }
        throw wrong("float64", i);
    }

    /** @return the float32 at {@code i} */
    public float getFloat(int i) {
        notNull(i, "float32");
        if (vector instanceof Float4Vector v) {
            return v.get(i);
        }
        throw wrong("float32", i);
    }

    /** @return the bool at {@code i} */
    public boolean getBoolean(int i) {
        notNull(i, "bool");
        if (vector instanceof BitVector v) {
            return v.get(i) == 1;
        }
        throw wrong("bool", i);
    }

    /** @return a copy of the binary (or utf8) value's bytes at {@code i}, or null when it is null */
    public byte[] getBytes(int i) {
        if (vector instanceof BaseVariableWidthVector v) {
            return v.isNull(i) ? null : v.get(i);
        }
        throw wrong("binary", i);
    }

    /**
     * The binary (or utf8) value's bytes at {@code i} without copying them: a read-only buffer over the batch's own
     * memory, valid only until the scan or take callback returns (copy what you keep).
     *
     * @return the bytes, position 0 and limit their length; null when the value is null
     */
    public ByteBuffer getBytesView(int i) {
        if (vector instanceof BaseVariableWidthVector v) {
            if (v.isNull(i)) {
                return null;
            }
            long start = v.getStartOffset(i);
            int length = v.getValueLength(i);
            return v.getDataBuffer().nioBuffer(start, length).asReadOnlyBuffer();
        }
        throw wrong("binary", i);
    }

    /** @return the length in bytes of the binary (or utf8) value at {@code i}; 0 when it is null */
    public int getByteLength(int i) {
        if (vector instanceof BaseVariableWidthVector v) {
            return v.isNull(i) ? 0 : v.getValueLength(i);
        }
        throw wrong("binary", i);
    }

    /**
     * @return the float32 items of the list or fixed-size list (an embedding: float32[D]) at {@code i}, or null when it
     *     is null; a null item reads as NaN
     */
    public float[] getFloats(int i) {
        if (vector.isNull(i)) {
            return null;
        }
        if (!(items().vector instanceof Float4Vector d)) {
            throw wrong("list<float32>", i);
        }
        int from = listStart(i);
        float[] out = new float[listEnd(i) - from];
        for (int k = 0; k < out.length; k++) {
            out[k] = d.isNull(from + k) ? Float.NaN : d.get(from + k);
        }
        return out;
    }

    /** @return the float64 items of the list at {@code i}, or null when it is null; a null item reads as NaN */
    public double[] getDoubles(int i) {
        if (vector.isNull(i)) {
            return null;
        }
        if (!(items().vector instanceof Float8Vector d)) {
            throw wrong("list<float64>", i);
        }
        int from = listStart(i);
        double[] out = new double[listEnd(i) - from];
        for (int k = 0; k < out.length; k++) {
            out[k] = d.isNull(from + k) ? Double.NaN : d.get(from + k);
        }
        return out;
    }

    /** @return the utf8 items of the list at {@code i}, or null when it is null */
    public List<String> getStrings(int i) {
        if (vector.isNull(i)) {
            return null;
        }
        ColumnView items = items();
        List<String> out = new ArrayList<>();
        for (int k = listStart(i); k < listEnd(i); k++) {
            out.add(items.getString(k));
        }
        return out;
    }

    /** @return the first item position of the list at row {@code i} (in {@link #items()}) */
    public int listStart(int i) {
        if (vector instanceof ListVector l) {
            return l.getElementStartIndex(i);
        }
        if (vector instanceof FixedSizeListVector l) {
            return i * l.getListSize();
        }
        throw wrong("list", i);
    }

    /** @return one past the last item position of the list at row {@code i}; {@code listStart(i)} when it is null */
    public int listEnd(int i) {
        if (vector instanceof ListVector l) {
            return l.isNull(i) ? l.getElementStartIndex(i) : l.getElementEndIndex(i);
        }
        if (vector instanceof FixedSizeListVector l) {
            return l.isNull(i) ? i * l.getListSize() : (i + 1) * l.getListSize();
        }
        throw wrong("list", i);
    }

    /** @return the number of items of the list at row {@code i} (0 when it is null) */
    public int listLength(int i) {
        return listEnd(i) - listStart(i);
    }

    /** @return the item column of a list or fixed-size list column */
    public ColumnView items() {
        if (items == null) {
            if (vector instanceof ListVector l) {
                items = new ColumnView(source, name + ".item", l.getDataVector());
            } else if (vector instanceof FixedSizeListVector l) {
                items = new ColumnView(source, name + ".item", l.getDataVector());
            } else {
                throw wrong("list", -1);
            }
        }
        return items;
    }

    private ColumnView items;

    /** @return whether this struct column has a field of that name */
    public boolean hasField(String field) {
        return vector instanceof StructVector s && s.getChild(field) != null;
    }

    /** @return the names of this struct column's fields, in order */
    public List<String> fieldNames() {
        if (vector instanceof StructVector s) {
            return List.copyOf(s.getChildFieldNames());
        }
        throw wrong("struct", -1);
    }

    /**
     * @param field a field of this struct column
     * @return its column, at the struct's positions
     * @throws LakeFormatException naming the fields there are, when there is none of that name
     */
    public ColumnView field(String field) {
        if (!(vector instanceof StructVector s)) {
            throw wrong("struct", -1);
        }
        ValueVector c = s.getChild(field);
        if (c == null) {
            throw new LakeFormatException(source + ": column " + name + " has no field '" + field + "'; its fields: "
                    + s.getChildFieldNames());
        }
        return new ColumnView(source, name + "." + field, c);
    }

    /**
     * The value at {@code i} as a plain Java value, whatever the kind: utf8 as String, int32 as Integer, int64 as Long,
     * float64 as Double, float32 as Float, bool as Boolean, binary as byte[] (a copy), lists as List, structs as Map
     * (field name to value, in field order), other kinds as their text.
     *
     * @return the value, or null when it is null
     */
    public Object getObject(int i) {
        if (vector.isNull(i)) {
            return null;
        }
        switch (kind) {
            case UTF8:
                return getString(i);
            case INT32:
                return getInt(i);
            case INT64:
                return getLong(i);
            case FLOAT64:
                return getDouble(i);
            case FLOAT32:
                return getFloat(i);
            case BOOL:
                return getBoolean(i);
            case BINARY:
                return getBytes(i);
            case LIST:
            case FIXED_SIZE_LIST: {
                ColumnView items = items();
                List<Object> out = new ArrayList<>();
                for (int k = listStart(i); k < listEnd(i); k++) {
                    out.add(items.getObject(k));
                }
                return out;
            }
            case STRUCT: {
                Map<String, Object> out = new LinkedHashMap<>();
                for (String f : fieldNames()) {
                    out.put(f, fieldView(f).getObject(i));
                }
                return out;
            }
            default: {
                Object o = vector.getObject(i);
                return o == null ? null : o.toString();
            }
        }
    }

    private final Map<String, ColumnView> fields = new java.util.HashMap<>();

    private ColumnView fieldView(String f) {
        return fields.computeIfAbsent(f, this::field);
    }

    private void notNull(int i, String expected) {
        if (vector.isNull(i)) {
            throw new LakeFormatException(source + ": column " + name + " is null at position " + i + "; expected a "
                    + expected + " value (check isNull first)");
        }
    }

    private LakeFormatException wrong(String expected, int i) {
        return new LakeFormatException(source + ": column " + name + " is " + spec().typeName() + ", not " + expected
                + (i >= 0 ? " (position " + i + ")" : ""));
    }
}
