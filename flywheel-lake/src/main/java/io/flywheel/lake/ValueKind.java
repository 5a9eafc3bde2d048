package io.flywheel.lake;

/**
 * The type of a column's values, as the lake's readers and writers see it (no storage type): what
 * {@link ColumnSpec} declares and {@link ColumnView} reads.
 */
public enum ValueKind {
    /** true / false. */
    BOOL,
    /** 32-bit signed integer (also 8- and 16-bit ones when read). */
    INT32,
    /** 64-bit signed integer. */
    INT64,
    /** 64-bit unsigned integer (Lance row addresses). */
    UINT64,
    /** 32-bit IEEE 754 float. */
    FLOAT32,
    /** 64-bit IEEE 754 float. */
    FLOAT64,
    /** UTF-8 text. */
    UTF8,
    /** Bytes (an encoded image, a hot JPEG copy). */
    BINARY,
    /** A variable-length list of one child type ({@link ColumnSpec#children()}: its item). */
    LIST,
    /** A list of exactly {@link ColumnSpec#listSize()} items of one child type (an embedding: float32[D]). */
    FIXED_SIZE_LIST,
    /** Named fields ({@link ColumnSpec#children()}). */
    STRUCT,
    /** Any other stored type: read as text by {@link ColumnView#getObject}. */
    OTHER
}
