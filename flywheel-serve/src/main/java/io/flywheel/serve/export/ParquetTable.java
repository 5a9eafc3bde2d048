package io.flywheel.serve.export;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.ParquetConfiguration;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;
import org.xerial.snappy.Snappy;

import io.flywheel.lake.ArrowSchemaMessage;
import io.flywheel.lake.ColumnSpec;
import io.flywheel.lake.ValueKind;

/**
 * A small table written as one Parquet file (Apache Parquet format 2.x, Snappy pages) the way
 * pyarrow writes it, so that pyarrow, pandas and Hugging Face {@code datasets} read the same
 * types back: lists use the three-level {@code LIST} structure ({@code list} / {@code element}),
 * strings are {@code BINARY (STRING)}, and the Arrow schema is stored base64-encoded under the
 * footer key {@code ARROW:schema} (an Arrow IPC schema message; list children named {@code item}
 * as pyarrow names them) so that fixed-length lists come back as {@code fixed_size_list}.
 *
 * <p>Rows are {@code Object[]} in column order: {@code Long} for INT64, {@code Float} / {@code
 * float[]} for FLOAT32, {@code Double} / {@code double[]} for FLOAT64, {@code String} / {@code
 * String[]} for STRING, {@code long[]} for INT64 lists, {@code double[][][]} for three-level
 * FLOAT64 lists (LeRobot's per-channel image statistics, shape [3][1][1]). Not thread-safe.
 */
final class ParquetTable implements AutoCloseable {
    /** Column kinds. */
    enum Kind { INT64, FLOAT32, FLOAT64, STRING, LIST_FLOAT32, LIST_FLOAT64, LIST_INT64, LIST_STRING, LIST3_FLOAT64 }

    /**
     * A column.
     *
     * @param name column name (LeRobot uses dots and slashes: {@code observation.state},
     *     {@code videos/observation.images.cam/from_timestamp})
     * @param kind its type
     * @param fixedLength for LIST_FLOAT32 / LIST_FLOAT64: every row's length (stored as an Arrow
     *     {@code fixed_size_list}), or 0 for variable length
     */
    record Column(String name, Kind kind, int fixedLength) {
        static Column of(String name, Kind kind) {
            return new Column(name, kind, 0);
        }
    }

    /**
     * Snappy pages through snappy-java directly: parquet-java's own codec factory builds a Hadoop
     * Configuration for every codec, which would pull Hadoop in at run time.
     */
    private static final CompressionCodecFactory SNAPPY = new CompressionCodecFactory() {
        @Override
        public BytesInputCompressor getCompressor(CompressionCodecName codec) {
            if (codec != CompressionCodecName.SNAPPY) {
                throw new IllegalArgumentException("only Snappy pages are written, not " + codec);
            }
            return new BytesInputCompressor() {
                @Override
                public BytesInput compress(BytesInput bytes) throws IOException {
                    return BytesInput.from(Snappy.compress(bytes.toByteArray()));
                }

                @Override
                public CompressionCodecName getCodecName() {
                    return CompressionCodecName.SNAPPY;
                }

                @Override
                public void release() {
                }
            };
        }

        @Override
        public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
            throw new UnsupportedOperationException("this factory only compresses");
        }

        @Override
        public void release() {
        }
    };

    private final Path file;
    private final List<Column> columns;
    private final ParquetWriter<Object[]> writer;
    private long rows;

    private ParquetTable(Path file, List<Column> columns, Map<String, String> metadata, int rowGroupRows) throws IOException {
        this.file = file;
        this.columns = List.copyOf(columns);
        Map<String, String> extra = new LinkedHashMap<>(metadata);
        extra.put("ARROW:schema", arrowSchema(columns));
        MessageType schema = parquetSchema(columns);
        Files.deleteIfExists(file);
        Files.createDirectories(file.toAbsolutePath().getParent());
        writer = new Builder(new LocalOutputFile(file), schema, this.columns, extra)
                .withConf(new PlainParquetConfiguration())
                .withCodecFactory(SNAPPY)
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
                .withRowGroupSize(Math.max(1L << 20, (long) rowGroupRows * 64))
                .withPageSize(1 << 20)
                .build();
    }

    /**
     * @param file the target (replaced)
     * @param columns the columns, in order
     * @param metadata extra footer key-value metadata (e.g. {@code pandas})
     * @return an open table; close it to write the footer
     * @throws IOException when the file cannot be created
     */
    static ParquetTable create(Path file, List<Column> columns, Map<String, String> metadata) throws IOException {
        return new ParquetTable(file, columns, metadata, 100_000);
    }

    /**
     * @param row one value per column (never null)
     * @throws IOException when writing fails
     * @throws IllegalArgumentException when a value has the wrong type or a fixed list the wrong length
     */
    void write(Object... row) throws IOException {
        if (row.length != columns.size()) {
            throw new IllegalArgumentException(file + ": row " + rows + " has " + row.length + " values for " + columns.size()
                    + " columns");
        }
        writer.write(row);
        rows++;
    }

    /** @return rows written */
    long rows() {
        return rows;
    }

    @Override
    public void close() throws IOException {
        writer.close();
    }

    private static MessageType parquetSchema(List<Column> columns) {
        Types.MessageTypeBuilder b = Types.buildMessage();
        for (Column c : columns) {
            b.addField(parquetType(c));
        }
        return b.named("schema");
    }

    private static Type parquetType(Column c) {
        return switch (c.kind()) {
            case INT64 -> Types.required(PrimitiveTypeName.INT64).named(c.name());
            case FLOAT32 -> Types.required(PrimitiveTypeName.FLOAT).named(c.name());
            case FLOAT64 -> Types.required(PrimitiveTypeName.DOUBLE).named(c.name());
            case STRING -> Types.required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named(c.name());
            case LIST_FLOAT32 -> list(c.name(), Types.required(PrimitiveTypeName.FLOAT).named("element"));
            case LIST_FLOAT64 -> list(c.name(), Types.required(PrimitiveTypeName.DOUBLE).named("element"));
            case LIST_INT64 -> list(c.name(), Types.required(PrimitiveTypeName.INT64).named("element"));
            case LIST_STRING -> list(c.name(),
                    Types.required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("element"));
            case LIST3_FLOAT64 -> list(c.name(), listOf("element",
                    listOf("element", Types.required(PrimitiveTypeName.DOUBLE).named("element"))));
        };
    }

    private static Type list(String name, Type element) {
        return Types.requiredGroup().as(LogicalTypeAnnotation.listType())
                .addField(Types.repeatedGroup().addField(element).named("list")).named(name);
    }

    private static Type listOf(String name, Type element) {
        return list(name, element);
    }

    /** The Arrow schema of the same columns as an IPC message, base64, as pyarrow stores it. */
    private static String arrowSchema(List<Column> columns) {
        List<ColumnSpec> specs = new ArrayList<>();
        for (Column c : columns) {
            specs.add(arrowColumn(c.name(), c));
        }
        return Base64.getEncoder().encodeToString(ArrowSchemaMessage.serialize(specs));
    }

    /** @return the column as Arrow types it (every value and item required; list children named {@code item}) */
    private static ColumnSpec arrowColumn(String name, Column c) {
        return switch (c.kind()) {
            case INT64 -> leaf(name, ValueKind.INT64);
            case FLOAT32 -> leaf(name, ValueKind.FLOAT32);
            case FLOAT64 -> leaf(name, ValueKind.FLOAT64);
            case STRING -> leaf(name, ValueKind.UTF8);
            case LIST_FLOAT32 -> listColumn(name, leaf("item", ValueKind.FLOAT32), c.fixedLength());
            case LIST_FLOAT64 -> listColumn(name, leaf("item", ValueKind.FLOAT64), c.fixedLength());
            case LIST_INT64 -> listColumn(name, leaf("item", ValueKind.INT64), 0);
            case LIST_STRING -> listColumn(name, leaf("item", ValueKind.UTF8), 0);
            case LIST3_FLOAT64 -> listColumn(name, listColumn("item", listColumn("item", leaf("item", ValueKind.FLOAT64),
                    0), 0), 0);
        };
    }

    private static ColumnSpec leaf(String name, ValueKind kind) {
        return ColumnSpec.of(name, kind, false);
    }

    private static ColumnSpec listColumn(String name, ColumnSpec item, int fixed) {
        return fixed > 0 ? ColumnSpec.fixedSizeList(name, false, fixed, item) : ColumnSpec.list(name, false, item);
    }

    private static final class Builder extends ParquetWriter.Builder<Object[], Builder> {
        private final MessageType schema;
        private final List<Column> columns;
        private final Map<String, String> extra;

        Builder(LocalOutputFile out, MessageType schema, List<Column> columns, Map<String, String> extra) {
            super(out);
            this.schema = schema;
            this.columns = columns;
            this.extra = extra;
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        protected WriteSupport<Object[]> getWriteSupport(org.apache.hadoop.conf.Configuration conf) {
            return new RowWriteSupport(schema, columns, extra);
        }

        @Override
        protected WriteSupport<Object[]> getWriteSupport(ParquetConfiguration conf) {
            return new RowWriteSupport(schema, columns, extra);
        }
    }

    private static final class RowWriteSupport extends WriteSupport<Object[]> {
        private final MessageType schema;
        private final List<Column> columns;
        private final Map<String, String> extra;
        private RecordConsumer rc;

        RowWriteSupport(MessageType schema, List<Column> columns, Map<String, String> extra) {
            this.schema = schema;
            this.columns = columns;
            this.extra = extra;
        }

        @Override
        public WriteContext init(org.apache.hadoop.conf.Configuration configuration) {
            return new WriteContext(schema, new HashMap<>(extra));
        }

        @Override
        public WriteContext init(ParquetConfiguration configuration) {
            return new WriteContext(schema, new HashMap<>(extra));
        }

        @Override
        public void prepareForWrite(RecordConsumer recordConsumer) {
            this.rc = recordConsumer;
        }

        @Override
        public void write(Object[] row) {
            rc.startMessage();
            for (int i = 0; i < columns.size(); i++) {
                Column c = columns.get(i);
                Object v = row[i];
                if (v == null) {
                    throw new IllegalArgumentException("column " + c.name() + " is required, got null");
                }
                rc.startField(c.name(), i);
                value(c, v);
                rc.endField(c.name(), i);
            }
            rc.endMessage();
        }

        private void value(Column c, Object v) {
            switch (c.kind()) {
                case INT64 -> rc.addLong(((Number) v).longValue());
                case FLOAT32 -> rc.addFloat(((Number) v).floatValue());
                case FLOAT64 -> rc.addDouble(((Number) v).doubleValue());
                case STRING -> rc.addBinary(Binary.fromString((String) v));
                case LIST_FLOAT32 -> {
                    float[] a = (float[]) v;
                    checkLength(c, a.length);
                    list(a.length, k -> rc.addFloat(a[k]));
                }
                case LIST_FLOAT64 -> {
                    double[] a = (double[]) v;
                    checkLength(c, a.length);
                    list(a.length, k -> rc.addDouble(a[k]));
                }
                case LIST_INT64 -> {
                    long[] a = (long[]) v;
                    list(a.length, k -> rc.addLong(a[k]));
                }
                case LIST_STRING -> {
                    String[] a = (String[]) v;
                    list(a.length, k -> rc.addBinary(Binary.fromConstantByteArray(a[k].getBytes(StandardCharsets.UTF_8))));
                }
                case LIST3_FLOAT64 -> {
                    double[][][] a = (double[][][]) v;
                    list(a.length, i -> list(a[i].length, j -> list(a[i][j].length, k -> rc.addDouble(a[i][j][k]))));
                }
            }
        }

        private static void checkLength(Column c, int n) {
            if (c.fixedLength() > 0 && n != c.fixedLength()) {
                throw new IllegalArgumentException("column " + c.name() + " holds " + c.fixedLength() + " values per row, got "
                        + n);
            }
        }

        /** Writes the repeated group {@code list} with n {@code element}s, each written by {@code element}. */
        private void list(int n, java.util.function.IntConsumer element) {
            rc.startGroup();
            if (n > 0) {
                rc.startField("list", 0);
                for (int k = 0; k < n; k++) {
                    rc.startGroup();
                    rc.startField("element", 0);
                    element.accept(k);
                    rc.endField("element", 0);
                    rc.endGroup();
                }
                rc.endField("list", 0);
            }
            rc.endGroup();
        }

        @Override
        public FinalizedWriteContext finalizeWrite() {
            return new FinalizedWriteContext(new HashMap<>());
        }
    }
}
