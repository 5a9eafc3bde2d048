package io.flywheel.lake;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.StreamMatch;

/**
 * A batch of rows of a lake table, as a scan or take hands it over ({@link LakeTable#scan}, {@link LakeTable#take}):
 * the columns asked for, read by name and position with typed accessors ({@link #column}, then
 * {@link ColumnView#getString}, {@link ColumnView#getLong}, ...), nested columns by navigation
 * ({@code column(TableSchemas.IMAGES).items().field("hot_jpeg")}), the {@code frames} structs as row records
 * ({@link #imageLocators}, {@link #streamMatches}), and any row as plain Java values ({@link #row}).
 *
 * <p>Valid only during the callback that received it: the lake reuses or frees its memory after. The values the
 * accessors return are copies, except {@link ColumnView#getBytesView}. Not thread-safe.
 */
public final class RowBatch {
    private final VectorSchemaRoot root;
    private final String source;
    private final Map<String, ColumnView> views = new HashMap<>();

    /** @param source the table and version, for messages ({@code table <uri> at version <v>}) */
    RowBatch(VectorSchemaRoot root, String source) {
        this.root = root;
        this.source = source;
    }

    /** @return the number of rows */
    public int rowCount() {
        return root.getRowCount();
    }

    /** @return the names of the batch's columns, in order */
    public List<String> columnNames() {
        List<String> out = new ArrayList<>();
        for (FieldVector v : root.getFieldVectors()) {
            out.add(v.getName());
        }
        return out;
    }

    /** @return the batch's columns, described, in order */
    public List<ColumnSpec> columns() {
        return ArrowTypes.specs(root.getSchema().getFields());
    }

    /** @return whether the batch has this column */
    public boolean has(String column) {
        return views.containsKey(column) || root.getVector(column) != null;
    }

    /**
     * @param name a column of the batch
     * @return its values
     * @throws LakeFormatException naming the table, version and the batch's columns when it has no such column
     */
    public ColumnView column(String name) {
        ColumnView v = views.get(name);
        if (v == null) {
            FieldVector f = root.getVector(name);
            if (f == null) {
                throw new LakeFormatException(source + ": the batch has no column '" + name + "'; its columns: "
                        + columnNames());
            }
            v = new ColumnView(source, name, f);
            views.put(name, v);
        }
        return v;
    }

    /** @return the value of a column at a row as a plain Java value ({@link ColumnView#getObject}) */
    public Object value(String column, int row) {
        return column(column).getObject(row);
    }

    /** @return every column of a row, by name in column order, as plain Java values ({@link ColumnView#getObject}) */
    public Map<String, Object> row(int row) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (FieldVector v : root.getFieldVectors()) {
            out.put(v.getName(), column(v.getName()).getObject(row));
        }
        return out;
    }

    /**
     * The camera image locators of a row's {@code images} column ({@code frames} and {@code trainset_samples}), one
     * per camera in camera order: topic, raw file, chunk offset, offset, length, compression, residual, and format,
     * width, height where the table has them.
     *
     * @return the locators; empty when the list is null
     * @throws LakeFormatException when the batch has no {@code images} column of image locators
     */
    public List<ImageLocator> imageLocators(int row) {
        ColumnView images = column(TableSchemas.IMAGES);
        ColumnView s = images.items();
        ColumnView topic = s.field(TableSchemas.IMAGE_TOPIC);
        ColumnView uri = s.field(TableSchemas.IMAGE_RAW_URI);
        ColumnView chunk = s.field(TableSchemas.IMAGE_CHUNK_OFFSET);
        ColumnView offset = s.field(TableSchemas.IMAGE_OFFSET);
        ColumnView length = s.field(TableSchemas.IMAGE_LENGTH);
        ColumnView compression = s.field(TableSchemas.IMAGE_COMPRESSION);
        ColumnView residual = s.field(TableSchemas.IMAGE_RESIDUAL_NS);
        ColumnView format = s.hasField(TableSchemas.IMAGE_FORMAT) ? s.field(TableSchemas.IMAGE_FORMAT) : null;
        ColumnView width = s.hasField(TableSchemas.IMAGE_WIDTH) ? s.field(TableSchemas.IMAGE_WIDTH) : null;
        ColumnView height = s.hasField(TableSchemas.IMAGE_HEIGHT) ? s.field(TableSchemas.IMAGE_HEIGHT) : null;
        List<ImageLocator> out = new ArrayList<>();
        for (int k = images.listStart(row); k < images.listEnd(row); k++) {
            out.add(new ImageLocator(topic.getString(k), uri.getString(k), chunk.getLong(k), offset.getLong(k),
                    length.getLong(k), compression.getString(k), residual.isNull(k) ? null : residual.getLong(k),
                    format == null ? null : format.getString(k),
                    width == null || width.isNull(k) ? null : width.getInt(k),
                    height == null || height.isNull(k) ? null : height.getInt(k)));
        }
        return out;
    }

    /**
     * @return the stream matches of a row's {@code streams} column ({@code frames}), one per aligned stream; empty
     *     when the list is null
     * @throws LakeFormatException when the batch has no {@code streams} column of stream matches
     */
    public List<StreamMatch> streamMatches(int row) {
        ColumnView streams = column(TableSchemas.STREAMS);
        ColumnView s = streams.items();
        ColumnView name = s.field(TableSchemas.STREAM_NAME);
        ColumnView matched = s.field(TableSchemas.STREAM_MATCHED);
        ColumnView residual = s.field(TableSchemas.STREAM_RESIDUAL_NS);
        List<StreamMatch> out = new ArrayList<>();
        for (int k = streams.listStart(row); k < streams.listEnd(row); k++) {
            out.add(new StreamMatch(name.getString(k), matched.getBoolean(k),
                    residual.isNull(k) ? null : residual.getLong(k)));
        }
        return out;
    }
}
