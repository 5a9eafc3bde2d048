package io.flywheel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Where a Lance take of 64 random samples goes, by layout: the same rows (state float64[7], one camera's locator
 * struct of 16 fields, an 18 KB image) written three ways with lance-core alone, then {@code Dataset.take} of 64 random
 * rows (sorted), warm (page cache) and cold (each file evicted with {@code posix_fadvise(DONTNEED)} through
 * {@code dd iflag=nocache} before each batch), p50 over the rounds, every image checked by value.
 *
 * <ul>
 *   <li>{@code nested}: the image inside the camera struct, {@code images: list<struct<..., hot_jpeg binary>>}, as
 *       {@code trainset_samples} has stored it (the take decodes the whole struct to reach the bytes);</li>
 *   <li>{@code flat_list}: the struct without the image, and the images in a top-level {@code list<binary>} column
 *       in the cameras' order;</li>
 *   <li>{@code flat}: the struct without the image and one top-level {@code binary} column (one camera).</li>
 * </ul>
 *
 * <p>Arguments: {@code DIR [ROWS=200000] [ROUNDS=100] [COLD_ROUNDS=8]}. Prints one JSON line per (layout, columns).
 */
public final class TakeLayouts {
    static final int IMAGE_BYTES = 18_000;
    static final int BATCH = 64;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "/tmp/flywheel-bench/take-layouts");
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 100;
        int coldRounds = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        Files.createDirectories(dir);
        try (BufferAllocator alloc = new RootAllocator()) {
            for (String layout : List.of("nested", "flat_list", "flat")) {
                Path ds = dir.resolve(layout + "-" + rows + ".lance");
                if (!Files.exists(ds.resolve("_versions"))) {
                    long t0 = System.nanoTime();
                    write(alloc, ds, layout, rows);
                    LoaderBench.emit(Map.of("step", "write", "layout", layout, "rows", rows,
                            "seconds", (System.nanoTime() - t0) / 1e9));
                }
            }
            for (int pass = 0; pass < 2; pass++) {
                boolean cold = pass == 1;
                int n = cold ? coldRounds : rounds;
                for (String[] c : new String[][] {
                        {"nested", "state,images"}, {"nested", "images"}, {"nested", "state"},
                        {"flat_list", "state,images,hot_jpeg"}, {"flat_list", "hot_jpeg"}, {"flat_list", "images"},
                        {"flat", "state,images,hot_jpeg"}, {"flat", "hot_jpeg"}, {"flat", "sample_index"},
                        {"flat", "state"}, {"flat", "state_fsl"}, {"flat", "episode_id"}, {"flat", "frame_index"},
                        {"flat", "sample_index,frame_index,timestamp_ns,episode_id"},
                        {"flat", "state_fsl,hot_jpeg"}, {"flat", "state,hot_jpeg"},
                        {"flat", "sample_index,episode_id,frame_index,timestamp_ns,state_fsl,hot_jpeg"}}) {
                    Path ds = dir.resolve(c[0] + "-" + rows + ".lance");
                    List<String> cols = List.of(c[1].split(","));
                    double[] ms = new double[n];
                    try (org.lance.Dataset d = org.lance.Dataset.open().allocator(alloc).uri(ds.toString()).build()) {
                        SplittableRandom r = new SplittableRandom(7);
                        take(d, randomIds(r, rows), cols, c[0]); // opens the files once
                        for (int i = 0; i < n; i++) {
                            long[] ids = randomIds(r, rows);
                            if (cold) {
                                evict(ds);
                            }
                            long t0 = System.nanoTime();
                            take(d, ids, cols, c[0]);
                            ms[i] = (System.nanoTime() - t0) / 1e6;
                        }
                    }
                    Arrays.sort(ms);
                    LoaderBench.emit(Map.of("layout", c[0], "columns", c[1], "cold", cold,
                            "batches", n, "p50_ms", ms[n / 2], "p90_ms", ms[(int) (n * 0.9)]));
                }
            }
        }
    }

    static long[] randomIds(SplittableRandom r, int rows) {
        long[] ids = new long[BATCH];
        for (int i = 0; i < BATCH; i++) {
            ids[i] = r.nextInt(rows);
        }
        return Arrays.stream(ids).distinct().sorted().toArray();
    }

    /** Takes the rows and checks each image (when taken) against the bytes its row was written with. */
    static void take(org.lance.Dataset d, long[] ids, List<String> cols, String layout) throws IOException {
        List<Long> list = Arrays.stream(ids).boxed().toList();
        int seen = 0;
        try (ArrowReader reader = d.take(list, cols)) {
            while (reader.loadNextBatch()) {
                VectorSchemaRoot b = reader.getVectorSchemaRoot();
                for (int r = 0; r < b.getRowCount(); r++) {
                    long row = ids[seen++];
                    byte[] img = null;
                    if (layout.equals("nested") && cols.contains("images")) {
                        ListVector l = (ListVector) b.getVector("images");
                        StructVector s = (StructVector) l.getDataVector();
                        img = ((VarBinaryVector) s.getChild("hot_jpeg")).get(l.getElementStartIndex(r));
                    } else if (layout.equals("flat_list") && cols.contains("hot_jpeg")) {
                        ListVector l = (ListVector) b.getVector("hot_jpeg");
                        img = ((VarBinaryVector) l.getDataVector()).get(l.getElementStartIndex(r));
                    } else if (layout.equals("flat") && cols.contains("hot_jpeg")) {
                        img = ((VarBinaryVector) b.getVector("hot_jpeg")).get(r);
                    }
                    if (img != null && !Arrays.equals(img, image(row))) {
                        throw new IllegalStateException(layout + ": wrong image in row " + row);
                    }
                }
            }
        }
        if (seen != ids.length) {
            throw new IllegalStateException(layout + ": " + seen + " rows for " + ids.length);
        }
    }

    static void evict(Path ds) throws IOException, InterruptedException {
        List<Path> files;
        try (var s = Files.walk(ds)) {
            files = s.filter(Files::isRegularFile).toList();
        }
        for (Path f : files) {
            Process p = new ProcessBuilder("dd", "if=" + f, "iflag=nocache", "count=0", "status=none")
                    .redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor();
        }
    }

    /** Row {@code row}'s image: incompressible bytes seeded by the row (JPEG data does not compress either). */
    static byte[] image(long row) {
        byte[] b = new byte[IMAGE_BYTES];
        new SplittableRandom(row * 0x9E3779B97F4A7C15L).nextBytes(b);
        return b;
    }

    static final List<String[]> STRUCT = List.of(new String[] {"topic", "s"}, new String[] {"raw_uri", "s"},
            new String[] {"chunk_offset", "l"}, new String[] {"offset", "l"}, new String[] {"length", "l"},
            new String[] {"compression", "s"}, new String[] {"residual_ns", "l"}, new String[] {"format", "s"},
            new String[] {"width", "i"}, new String[] {"height", "i"}, new String[] {"sharpness", "d"},
            new String[] {"blurry", "b"}, new String[] {"mean_abs_diff", "d"}, new String[] {"is_static", "b"},
            new String[] {"phash", "l"}, new String[] {"decode_error", "s"});

    static Schema schema(String layout) {
        List<Field> item = new ArrayList<>();
        for (String[] f : STRUCT) {
            ArrowType t = switch (f[1]) {
                case "s" -> ArrowType.Utf8.INSTANCE;
                case "l" -> new ArrowType.Int(64, true);
                case "i" -> new ArrowType.Int(32, true);
                case "d" -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
                default -> ArrowType.Bool.INSTANCE;
            };
            item.add(new Field(f[0], FieldType.nullable(t), null));
        }
        Field binary = new Field("hot_jpeg", FieldType.nullable(ArrowType.Binary.INSTANCE), null);
        if (layout.equals("nested")) {
            item.add(15, binary);
        }
        List<Field> fields = new ArrayList<>();
        fields.add(new Field("sample_index", FieldType.notNullable(new ArrowType.Int(64, true)), null));
        fields.add(new Field("state", FieldType.nullable(ArrowType.List.INSTANCE), List.of(new Field("item",
                FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)), null))));
        fields.add(new Field("images", FieldType.nullable(ArrowType.List.INSTANCE), List.of(
                new Field("item", FieldType.nullable(ArrowType.Struct.INSTANCE), item))));
        if (layout.equals("flat_list")) {
            fields.add(new Field("hot_jpeg", FieldType.nullable(ArrowType.List.INSTANCE),
                    List.of(new Field("item", FieldType.nullable(ArrowType.Binary.INSTANCE), null))));
        } else if (layout.equals("flat")) {
            fields.add(binary);
            fields.add(new Field("state_fsl", FieldType.nullable(new ArrowType.FixedSizeList(7)), List.of(new Field(
                    "item", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)), null))));
            fields.add(new Field("episode_id", FieldType.nullable(ArrowType.Utf8.INSTANCE), null));
            fields.add(new Field("frame_index", FieldType.nullable(new ArrowType.Int(32, true)), null));
            fields.add(new Field("timestamp_ns", FieldType.nullable(new ArrowType.Int(64, true)), null));
        }
        return new Schema(fields);
    }

    static void write(BufferAllocator alloc, Path ds, String layout, int rows) throws Exception {
        Schema schema = schema(layout);
        try (ArrowReader reader = new Rows(alloc, schema, layout, rows)) {
            org.lance.Dataset.write().allocator(alloc).reader(reader).uri(ds.toString())
                    .mode(org.lance.WriteParams.WriteMode.CREATE).execute().close();
        }
    }

    /** Generates the rows in batches of 2,048. */
    static final class Rows extends ArrowReader {
        private final Schema schema;
        private final String layout;
        private final int rows;
        private int next;

        Rows(BufferAllocator alloc, Schema schema, String layout, int rows) {
            super(alloc);
            this.schema = schema;
            this.layout = layout;
            this.rows = rows;
        }

        @Override
        public boolean loadNextBatch() throws IOException {
            if (next >= rows) {
                return false;
            }
            prepareLoadNextBatch();
            VectorSchemaRoot root = getVectorSchemaRoot();
            int n = Math.min(2048, rows - next);
            ((BigIntVector) root.getVector("sample_index")).allocateNew(n);
            ListVector state = (ListVector) root.getVector("state");
            ListVector images = (ListVector) root.getVector("images");
            state.allocateNew();
            images.allocateNew();
            StructVector s = (StructVector) images.getDataVector();
            Float8Vector sv = (Float8Vector) state.getDataVector();
            for (int r = 0; r < n; r++) {
                long row = next + r;
                ((BigIntVector) root.getVector("sample_index")).setSafe(r, row);
                state.startNewValue(r);
                for (int k = 0; k < 7; k++) {
                    sv.setSafe(r * 7 + k, row + k / 10.0);
                }
                state.endValue(r, 7);
                images.startNewValue(r);
                s.setIndexDefined(r);
                for (String[] f : STRUCT) {
                    FieldVector v = (FieldVector) s.getChild(f[0]);
                    switch (f[1]) {
                        case "s" -> ((VarCharVector) v).setSafe(r, (f[0] + "/" + row).getBytes());
                        case "l" -> ((BigIntVector) v).setSafe(r, row * 31);
                        case "i" -> ((IntVector) v).setSafe(r, 320);
                        case "d" -> ((Float8Vector) v).setSafe(r, row / 3.0);
                        default -> ((BitVector) v).setSafe(r, (int) (row & 1));
                    }
                }
                byte[] img = image(row);
                if (layout.equals("nested")) {
                    ((VarBinaryVector) s.getChild("hot_jpeg")).setSafe(r, img);
                } else if (layout.equals("flat_list")) {
                    ListVector l = (ListVector) root.getVector("hot_jpeg");
                    if (r == 0) {
                        l.allocateNew();
                    }
                    l.startNewValue(r);
                    ((VarBinaryVector) l.getDataVector()).setSafe(r, img);
                    l.endValue(r, 1);
                } else {
                    ((VarBinaryVector) root.getVector("hot_jpeg")).setSafe(r, img);
                    org.apache.arrow.vector.complex.FixedSizeListVector f =
                            (org.apache.arrow.vector.complex.FixedSizeListVector) root.getVector("state_fsl");
                    if (r == 0) {
                        f.allocateNew();
                    }
                    f.setNotNull(r);
                    for (int k = 0; k < 7; k++) {
                        ((Float8Vector) f.getDataVector()).setSafe(r * 7 + k, row + k / 10.0);
                    }
                    ((VarCharVector) root.getVector("episode_id")).setSafe(r, ("ep-" + row / 200).getBytes());
                    ((IntVector) root.getVector("frame_index")).setSafe(r, (int) (row % 200));
                    ((BigIntVector) root.getVector("timestamp_ns")).setSafe(r, row * 33_000_000L);
                }
                images.endValue(r, 1);
            }
            for (FieldVector v : root.getFieldVectors()) {
                v.setValueCount(n);
            }
            s.setValueCount(n);
            for (FieldVector v : s.getChildrenFromFields()) {
                v.setValueCount(n);
            }
            sv.setValueCount(n * 7);
            if (layout.equals("flat_list")) {
                ((ListVector) root.getVector("hot_jpeg")).getDataVector().setValueCount(n);
            } else if (layout.equals("flat")) {
                ((org.apache.arrow.vector.complex.FixedSizeListVector) root.getVector("state_fsl")).getDataVector()
                        .setValueCount(n * 7);
            }
            root.setRowCount(n);
            next += n;
            return true;
        }

        @Override
        public long bytesRead() {
            return 0;
        }

        @Override
        protected void closeReadSource() {
        }

        @Override
        protected Schema readSchema() {
            return schema;
        }
    }
}
