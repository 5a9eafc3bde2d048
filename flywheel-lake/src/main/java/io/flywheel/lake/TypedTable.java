package io.flywheel.lake;

import java.util.List;
import java.util.function.Function;

import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A table whose rows are one record type: its name, its declared columns, and how its rows are written and read
 * (written with {@link LakeTransaction#append(TypedTable, Iterable, java.util.Set)} and
 * {@link LakeTransaction#overwrite(TypedTable, Iterable)}, read with {@link LakeTable#rows}). The curation tables are
 * {@link CurationTables}.
 *
 * @param <R> the row record
 */
public final class TypedTable<R> {
    private final String name;
    private final Function<EmbeddingModels, Schema> schema;
    private final PendingChange.Encoder<R> encoder;
    private final Function<ArrowRows.Cursor, R> decoder;

    TypedTable(String name, Function<EmbeddingModels, Schema> schema, PendingChange.Encoder<R> encoder,
               Function<ArrowRows.Cursor, R> decoder) {
        TableSchemas.checkName(name);
        this.name = name;
        this.schema = schema;
        this.encoder = encoder;
        this.decoder = decoder;
    }

    /** @return the table's name */
    public String name() {
        return name;
    }

    /**
     * @param models the lake's embedding models (a table that holds frames rows has their columns)
     * @return the columns a new version of the table is written with, in order
     */
    public List<ColumnSpec> columns(EmbeddingModels models) {
        return ArrowTypes.specs(schema.apply(models).getFields());
    }

    /** @return the column names a new version is written with, for a lake without embedding models */
    public List<String> columnNames() {
        return columns(EmbeddingModels.none()).stream().map(ColumnSpec::name).toList();
    }

    Schema schema(EmbeddingModels models) {
        return schema.apply(models);
    }

    PendingChange.Encoder<R> encoder() {
        return encoder;
    }

    Function<ArrowRows.Cursor, R> decoder() {
        return decoder;
    }

    @Override
    public String toString() {
        return name;
    }
}
