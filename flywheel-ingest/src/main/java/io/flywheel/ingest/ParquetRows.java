package io.flywheel.ingest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * A whole Parquet file (Apache Parquet format 2.x) read column-wise into Java values with Apache Parquet Java, without
 * Hadoop: {@link LocalInputFile}, {@link PlainParquetConfiguration} and the page codecs of this class (uncompressed,
 * Snappy through snappy-java, zstd through zstd-jni, gzip through {@link java.util.zip}).
 *
 * <p>Values per top-level column, one per row (null for a null value): {@code Long} for INT32 / INT64 / BOOLEAN (0/1),
 * {@code Double} for FLOAT / DOUBLE, {@code String} for BINARY (STRING) and other binaries (ISO-8859-1), {@code
 * double[]} for a list of numbers (the three-level {@code LIST} structure pyarrow writes, and legacy two-level
 * repeated fields), {@code String[]} for a list of strings. Other nested columns (structs such as LeRobot's
 * {@code image} features, lists of lists) are left out ({@link #skipped()}). Meant for metadata and the small
 * state/action rows of robot-learning datasets: the whole file is held in memory.
 */
public final class ParquetRows {
    private final String file;
    private final long rows;
    private final Map<String, Object[]> columns;
    private final List<String> skipped;
    private final Map<String, String> keyValue;

    private ParquetRows(String file, long rows, Map<String, Object[]> columns, List<String> skipped,
                        Map<String, String> keyValue) {
        this.file = file;
        this.rows = rows;
        this.columns = columns;
        this.skipped = skipped;
        this.keyValue = keyValue;
    }

    /**
     * Reads a file.
     *
     * @param path a Parquet file
     * @param wanted the top-level columns to decode, or null for all readable ones
     * @return its rows
     * @throws IngestException naming the file when it is missing, not Parquet (no {@code PAR1} magic at both ends:
     *     a truncated file), has more than 2^31-1 rows, uses a page codec other than the four above, or a page does
     *     not decode (naming the row group)
     * @throws IOException when reading fails
     */
    public static ParquetRows read(Path path, Set<String> wanted) throws IOException {
        String name = path.toString();
        if (!Files.isRegularFile(path)) throw new IngestException(name, -1, "missing: expected a Parquet file here");
        long size = Files.size(path);
        byte[] head = new byte[4];
        byte[] tail = new byte[4];
        try (java.nio.channels.FileChannel fc = java.nio.channels.FileChannel.open(path)) {
            fc.read(ByteBuffer.wrap(head), 0);
            if (size >= 4) fc.read(ByteBuffer.wrap(tail), size - 4);
        }
        if (size < 12 || !"PAR1".equals(new String(head, java.nio.charset.StandardCharsets.ISO_8859_1))) {
            throw new IngestException(name, 0, "not a Parquet file: expected the magic PAR1 at the start ("
                    + size + " bytes)");
        }
        if (!"PAR1".equals(new String(tail, java.nio.charset.StandardCharsets.ISO_8859_1))) {
            throw new IngestException(name, size - 4, "truncated Parquet file: expected the magic PAR1 at its end"
                    + " (after the footer), " + size + " bytes");
        }
        ParquetReadOptions opts = new ParquetReadOptions.Builder(new PlainParquetConfiguration())
                .withCodecFactory(CODECS).build();
        Map<String, Object[]> cols = new LinkedHashMap<>();
        List<String> skipped = new ArrayList<>();
        try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(path), opts)) {
            MessageType schema = r.getFooter().getFileMetaData().getSchema();
            Map<String, String> kv = r.getFooter().getFileMetaData().getKeyValueMetaData();
            long n = r.getRecordCount();
            if (n > Integer.MAX_VALUE) throw new IngestException(name, -1, n + " rows: more than 2^31-1");
            List<Integer> fields = new ArrayList<>();
            for (int i = 0; i < schema.getFieldCount(); i++) {
                Type t = schema.getType(i);
                if (wanted != null && !wanted.contains(t.getName())) continue;
                if (kindOf(t) == null) {
                    skipped.add(t.getName());
                    continue;
                }
                fields.add(i);
                cols.put(t.getName(), new Object[(int) n]);
            }
            MessageColumnIO io = new ColumnIOFactory().getColumnIO(schema);
            int row = 0;
            int group = 0;
            PageReadStore pages;
            while ((pages = readGroup(r, name, group)) != null) {
                RecordReader<Group> rr = io.getRecordReader(pages, new GroupRecordConverter(schema));
                for (long k = 0; k < pages.getRowCount(); k++, row++) {
                    Group g;
                    try {
                        g = rr.read();
                    } catch (RuntimeException e) {
                        throw new IngestException(name, -1, "row group " + group + ", row " + row
                                + ": page does not decode: " + e.getMessage(), e);
                    }
                    for (int f : fields) {
                        cols.get(schema.getType(f).getName())[row] = value(g, f, schema.getType(f));
                    }
                }
                group++;
            }
            return new ParquetRows(name, n, cols, skipped, kv == null ? Map.of() : Map.copyOf(kv));
        } catch (IngestException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new IngestException(name, -1, "not a readable Parquet file: " + e.getMessage(), e);
        }
    }

    private static PageReadStore readGroup(ParquetFileReader r, String name, int group) throws IOException {
        try {
            return r.readNextRowGroup();
        } catch (IOException | RuntimeException e) {
            throw new IngestException(name, -1, "row group " + group + " does not read: " + e.getMessage(), e);
        }
    }

    /** @return the file */
    public String file() {
        return file;
    }

    /** @return the number of rows */
    public int rows() {
        return (int) rows;
    }

    /** @return whether the file has a decoded column of this name */
    public boolean has(String column) {
        return columns.containsKey(column);
    }

    /** @return the decoded columns' names, in schema order */
    public Set<String> names() {
        return columns.keySet();
    }

    /** @return the top-level columns left out (nested shapes other than lists of numbers or strings) */
    public List<String> skipped() {
        return List.copyOf(skipped);
    }

    /** @return the footer's key-value metadata */
    public Map<String, String> keyValue() {
        return keyValue;
    }

    /**
     * @param column a column
     * @return its values, one per row (shared: do not modify)
     * @throws IngestException naming the file when it has no such column (listing those it has)
     */
    public Object[] column(String column) throws IngestException {
        Object[] v = columns.get(column);
        if (v == null) {
            throw new IngestException(file, -1, "no column '" + column + "'; expected one (the file has "
                    + String.join(", ", columns.keySet()) + ")");
        }
        return v;
    }

    /**
     * @return the integer value at a row
     * @throws IngestException naming the file, column and row when it is null or not an integer
     */
    public long integer(String column, int row) throws IngestException {
        Object v = column(column)[row];
        if (v instanceof Long l) return l;
        if (v instanceof Double d && d == Math.rint(d)) return d.longValue();
        throw new IngestException(file, -1, "row " + row + ", column '" + column + "': expected an integer, found "
                + (v == null ? "null" : v));
    }

    /**
     * @return the number at a row
     * @throws IngestException naming the file, column and row when it is null or not a number
     */
    public double number(String column, int row) throws IngestException {
        Object v = column(column)[row];
        if (v instanceof Long l) return l;
        if (v instanceof Double d) return d;
        throw new IngestException(file, -1, "row " + row + ", column '" + column + "': expected a number, found "
                + (v == null ? "null" : v));
    }

    private enum Kind { LONG, DOUBLE, STRING, LIST_NUMBER, LIST_STRING }

    /** @return how a top-level field is decoded, or null when it is not */
    private static Kind kindOf(Type t) {
        if (t.isPrimitive()) {
            if (t.isRepetition(Type.Repetition.REPEATED)) { // legacy two-level list
                Kind k = primitive(t.asPrimitiveType());
                return k == Kind.STRING ? Kind.LIST_STRING : k == null ? null : Kind.LIST_NUMBER;
            }
            return primitive(t.asPrimitiveType());
        }
        Type element = listElement(t.asGroupType());
        if (element == null || !element.isPrimitive()) return null;
        Kind k = primitive(element.asPrimitiveType());
        return k == null ? null : k == Kind.STRING ? Kind.LIST_STRING : Kind.LIST_NUMBER;
    }

    /** @return the element type of a LIST group (three-level, or two-level with a repeated primitive), else null */
    private static Type listElement(GroupType g) {
        if (!(g.getLogicalTypeAnnotation() instanceof LogicalTypeAnnotation.ListLogicalTypeAnnotation)
                || g.getFieldCount() != 1) {
            return null;
        }
        Type rep = g.getType(0);
        if (!rep.isRepetition(Type.Repetition.REPEATED)) return null;
        if (rep.isPrimitive()) return rep;
        GroupType rg = rep.asGroupType();
        return rg.getFieldCount() == 1 ? rg.getType(0) : null;
    }

    private static Kind primitive(PrimitiveType p) {
        return switch (p.getPrimitiveTypeName()) {
            case INT32, INT64, BOOLEAN -> Kind.LONG;
            case FLOAT, DOUBLE -> Kind.DOUBLE;
            case BINARY -> Kind.STRING;
            default -> null;
        };
    }

    private static Object value(Group g, int field, Type t) {
        if (t.isPrimitive() && t.isRepetition(Type.Repetition.REPEATED)) {
            int n = g.getFieldRepetitionCount(field);
            return kindOf(t) == Kind.LIST_STRING ? strings(g, field, n) : numbers(g, field, n, t.asPrimitiveType());
        }
        if (g.getFieldRepetitionCount(field) == 0) return null;
        if (t.isPrimitive()) return scalar(g, field, 0, t.asPrimitiveType());
        Group list = g.getGroup(field, 0);
        int n = list.getFieldRepetitionCount(0);
        Type rep = t.asGroupType().getType(0);
        if (rep.isPrimitive()) {
            return primitive(rep.asPrimitiveType()) == Kind.STRING ? strings(list, 0, n) : numbers(list, 0, n, rep.asPrimitiveType());
        }
        PrimitiveType el = rep.asGroupType().getType(0).asPrimitiveType();
        boolean text = primitive(el) == Kind.STRING;
        double[] d = text ? null : new double[n];
        String[] s = text ? new String[n] : null;
        for (int i = 0; i < n; i++) {
            Group item = list.getGroup(0, i);
            boolean present = item.getFieldRepetitionCount(0) > 0;
            if (text) {
                s[i] = present ? (String) scalar(item, 0, 0, el) : null;
            } else {
                Object v = present ? scalar(item, 0, 0, el) : null;
                d[i] = v instanceof Long l ? l : v instanceof Double x ? x : Double.NaN;
            }
        }
        return text ? s : d;
    }

    private static double[] numbers(Group g, int field, int n, PrimitiveType p) {
        double[] d = new double[n];
        for (int i = 0; i < n; i++) {
            Object v = scalar(g, field, i, p);
            d[i] = v instanceof Long l ? l : (Double) v;
        }
        return d;
    }

    private static String[] strings(Group g, int field, int n) {
        String[] s = new String[n];
        for (int i = 0; i < n; i++) s[i] = g.getString(field, i);
        return s;
    }

    private static Object scalar(Group g, int field, int i, PrimitiveType p) {
        return switch (p.getPrimitiveTypeName()) {
            case INT32 -> (long) g.getInteger(field, i);
            case INT64 -> g.getLong(field, i);
            case BOOLEAN -> g.getBoolean(field, i) ? 1L : 0L;
            case FLOAT -> (double) g.getFloat(field, i);
            case DOUBLE -> g.getDouble(field, i);
            case BINARY -> p.getLogicalTypeAnnotation() instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation
                    ? g.getString(field, i)
                    : new String(g.getBinary(field, i).getBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
            default -> throw new IllegalStateException("unhandled " + p);
        };
    }

    /** Page decompressors without Hadoop: uncompressed, Snappy, zstd, gzip. */
    private static final CompressionCodecFactory CODECS = new CompressionCodecFactory() {
        @Override
        public BytesInputCompressor getCompressor(CompressionCodecName codec) {
            throw new UnsupportedOperationException("read only");
        }

        @Override
        public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
            return new BytesInputDecompressor() {
                @Override
                public BytesInput decompress(BytesInput bytes, int uncompressedSize) throws IOException {
                    byte[] in = bytes.toByteArray();
                    byte[] out = switch (codec) {
                        case UNCOMPRESSED -> in;
                        case SNAPPY -> org.xerial.snappy.Snappy.uncompress(in);
                        case ZSTD -> com.github.luben.zstd.Zstd.decompress(in, uncompressedSize);
                        case GZIP -> {
                            try (java.util.zip.GZIPInputStream z = new java.util.zip.GZIPInputStream(
                                    new java.io.ByteArrayInputStream(in))) {
                                yield z.readAllBytes();
                            }
                        }
                        default -> throw new IOException("page codec " + codec + ": expected UNCOMPRESSED, SNAPPY,"
                                + " ZSTD or GZIP");
                    };
                    if (out.length != uncompressedSize) {
                        throw new IOException(codec + " page decompressed to " + out.length + " bytes, the header says "
                                + uncompressedSize);
                    }
                    return BytesInput.from(out);
                }

                @Override
                public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int decompressedSize)
                        throws IOException {
                    byte[] in = new byte[compressedSize];
                    input.get(in);
                    output.put(decompress(BytesInput.from(in), decompressedSize).toByteBuffer());
                }

                @Override
                public void release() {
                }
            };
        }

        @Override
        public void release() {
        }
    };
}
