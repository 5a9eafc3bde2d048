package io.flywheel.lake;

import java.util.List;
import java.util.Objects;

/**
 * One column of a table or a batch, or one child of a nested column, described without storage types: its name, the
 * kind of its values, whether it may be null, and its children (a list's item, a struct's fields). Read a table's
 * columns with {@link LakeTable#columns()}; build one with the factories ({@link #of}, {@link #list},
 * {@link #fixedSizeList}, {@link #struct}) to describe a file that carries an Arrow schema
 * ({@link ArrowSchemaMessage}).
 *
 * @param name column or field name; a list's item is named {@code item}
 * @param kind the kind of its values
 * @param nullable whether a value may be null
 * @param listSize for {@link ValueKind#FIXED_SIZE_LIST}, the number of items per value (D of an embedding); else 0
 * @param children a list's single item, a struct's fields in order; empty for the others
 * @param doc what the column holds and its unit (the lake schema's {@code flywheel.doc}), or "" when undocumented
 */
public record ColumnSpec(String name, ValueKind kind, boolean nullable, int listSize, List<ColumnSpec> children,
                         String doc) {
    public ColumnSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        children = List.copyOf(children);
        doc = doc == null ? "" : doc;
        boolean nested = kind == ValueKind.LIST || kind == ValueKind.FIXED_SIZE_LIST;
        if (nested && children.size() != 1) {
            throw new IllegalArgumentException("column " + name + " (" + kind + ") needs exactly one item, got "
                    + children.size());
        }
        if ((kind == ValueKind.FIXED_SIZE_LIST) != (listSize > 0)) {
            throw new IllegalArgumentException("column " + name + " (" + kind + "): list size " + listSize
                    + " is only for a fixed-size list, which needs one > 0");
        }
        if (!nested && kind != ValueKind.STRUCT && !children.isEmpty()) {
            throw new IllegalArgumentException("column " + name + " (" + kind + ") has no children, got " + children);
        }
    }

    /** @return a column of a primitive kind ({@code nullable}: whether its values may be null) */
    public static ColumnSpec of(String name, ValueKind kind, boolean nullable) {
        return new ColumnSpec(name, kind, nullable, 0, List.of(), "");
    }

    /** @return a variable-length list column of {@code item} (a child conventionally named {@code item}) */
    public static ColumnSpec list(String name, boolean nullable, ColumnSpec item) {
        return new ColumnSpec(name, ValueKind.LIST, nullable, 0, List.of(item), "");
    }

    /** @return a list column of exactly {@code size} items each */
    public static ColumnSpec fixedSizeList(String name, boolean nullable, int size, ColumnSpec item) {
        return new ColumnSpec(name, ValueKind.FIXED_SIZE_LIST, nullable, size, List.of(item), "");
    }

    /** @return a struct column of the given fields */
    public static ColumnSpec struct(String name, boolean nullable, List<ColumnSpec> fields) {
        return new ColumnSpec(name, ValueKind.STRUCT, nullable, 0, fields, "");
    }

    /** @return a list's or fixed-size list's item */
    public ColumnSpec item() {
        if (kind != ValueKind.LIST && kind != ValueKind.FIXED_SIZE_LIST) {
            throw new IllegalStateException("column " + name + " is " + kind + ", not a list");
        }
        return children.get(0);
    }

    /**
     * @param field a struct field's name
     * @return that field
     * @throws IllegalArgumentException naming the fields when there is none of that name
     */
    public ColumnSpec field(String field) {
        for (ColumnSpec c : children) {
            if (c.name().equals(field)) {
                return c;
            }
        }
        throw new IllegalArgumentException("column " + name + " (" + kind + ") has no field '" + field + "'; fields: "
                + children.stream().map(ColumnSpec::name).toList());
    }

    /** @return the type in words: {@code int64}, {@code list<utf8>}, {@code fixed_size_list<float32, 384>}, ... */
    public String typeName() {
        return switch (kind) {
            case LIST -> "list<" + item().typeName() + ">";
            case FIXED_SIZE_LIST -> "fixed_size_list<" + item().typeName() + ", " + listSize + ">";
            case STRUCT -> "struct<" + String.join(", ", children.stream().map(c -> c.name() + " " + c.typeName())
                    .toList()) + ">";
            default -> kind.name().toLowerCase(java.util.Locale.ROOT);
        };
    }
}
