package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/** Arrow fields and the lake's storage-free {@link ColumnSpec}s, both ways. */
final class ArrowTypes {
    private ArrowTypes() {}

    /** @return the kind of an Arrow type ({@link ValueKind#OTHER} for the types the lake does not use) */
    static ValueKind kind(ArrowType t) {
        if (t instanceof ArrowType.Bool) {
            return ValueKind.BOOL;
        }
        if (t instanceof ArrowType.Int i) {
            if (i.getBitWidth() == 64) {
                return i.getIsSigned() ? ValueKind.INT64 : ValueKind.UINT64;
            }
            return i.getIsSigned() ? ValueKind.INT32 : ValueKind.OTHER;
        }
        if (t instanceof ArrowType.FloatingPoint f) {
            return switch (f.getPrecision()) {
                case SINGLE -> ValueKind.FLOAT32;
                case DOUBLE -> ValueKind.FLOAT64;
                default -> ValueKind.OTHER;
            };
        }
        if (t instanceof ArrowType.Utf8 || t instanceof ArrowType.LargeUtf8) {
            return ValueKind.UTF8;
        }
        if (t instanceof ArrowType.Binary || t instanceof ArrowType.LargeBinary) {
            return ValueKind.BINARY;
        }
        if (t instanceof ArrowType.List || t instanceof ArrowType.LargeList) {
            return ValueKind.LIST;
        }
        if (t instanceof ArrowType.FixedSizeList) {
            return ValueKind.FIXED_SIZE_LIST;
        }
        if (t instanceof ArrowType.Struct) {
            return ValueKind.STRUCT;
        }
        return ValueKind.OTHER;
    }

    /** @return the field as a column spec, children included, its {@code flywheel.doc} as the doc */
    static ColumnSpec spec(Field f) {
        List<ColumnSpec> children = new ArrayList<>();
        for (Field c : f.getChildren()) {
            children.add(spec(c));
        }
        ValueKind kind = kind(f.getType());
        int size = f.getType() instanceof ArrowType.FixedSizeList l ? l.getListSize() : 0;
        if (kind == ValueKind.OTHER) {
            children = List.of(); // e.g. a map: read as text, its children are not described
        }
        Map<String, String> meta = f.getMetadata();
        return new ColumnSpec(f.getName(), kind, f.isNullable(), size, children,
                meta == null ? "" : meta.getOrDefault(TableSchemas.DOC_KEY, ""));
    }

    /** @return the specs of fields, in order */
    static List<ColumnSpec> specs(List<Field> fields) {
        return fields.stream().map(ArrowTypes::spec).toList();
    }

    /**
     * @return the Arrow field of a column spec: its doc, when not empty, under {@code flywheel.doc}
     * @throws IllegalArgumentException for {@link ValueKind#OTHER}, which names no one type
     */
    static Field field(ColumnSpec c) {
        ArrowType t = switch (c.kind()) {
            case BOOL -> ArrowType.Bool.INSTANCE;
            case INT32 -> new ArrowType.Int(32, true);
            case INT64 -> new ArrowType.Int(64, true);
            case UINT64 -> new ArrowType.Int(64, false);
            case FLOAT32 -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
            case FLOAT64 -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
            case UTF8 -> ArrowType.Utf8.INSTANCE;
            case BINARY -> ArrowType.Binary.INSTANCE;
            case LIST -> ArrowType.List.INSTANCE;
            case FIXED_SIZE_LIST -> new ArrowType.FixedSizeList(c.listSize());
            case STRUCT -> ArrowType.Struct.INSTANCE;
            case OTHER -> throw new IllegalArgumentException("column " + c.name() + " is of kind OTHER, which names no"
                    + " Arrow type");
        };
        List<Field> children = new ArrayList<>();
        for (ColumnSpec k : c.children()) {
            children.add(field(k));
        }
        Map<String, String> meta = c.doc().isEmpty() ? null : Map.of(TableSchemas.DOC_KEY, c.doc());
        return new Field(c.name(), new FieldType(c.nullable(), t, null, meta), children.isEmpty() ? null : children);
    }
}
