package io.flywheel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;


import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.internal.filter2.columnindex.RowRanges;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.curate.trainset.TrainsetTables;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.StorageConfig;
import io.flywheel.lake.TableRef;
import io.flywheel.serve.cache.TrainsetCache;
import io.flywheel.serve.cache.WarmPlan;
import io.flywheel.serve.cache.Warmer;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;
import io.flywheel.testkit.S3TestServer;

/**
 * Random batches of 64 samples (state float64[7], action float64[7], one ~20 KB 320x240 JPEG): the
 * Flywheel loader against Lance take alone and against the same rows in Parquet (parquet-java,
 * default writer settings, and tuned for random access), warm and cold (page cache dropped), plus
 * loader throughput and warm-cache against S3-origin latency. Every read is checked by value: row
 * r has state[0] = r's source index and the image is the r-th generated JPEG.
 *
 * <p>usage: LoaderBench DIR [ROWS=20000] [WARM_BATCHES=200] [COLD_BATCHES=10]. Prints JSON lines. The
 * environment variable {@code LOADER_BENCH_PARTS} (comma list of latency, cold, throughput, s3; default all)
 * runs only the parts named.
 */
public final class LoaderBench {
    static final int IMAGES = 64;
    /** CRC32 of the image of each source index, filled while the lake is built or read back. */
    static long[] crcs;
    static final int FRAMES_PER_EPISODE = 200;
    static final String TAG = "bench-v1";
    static final MessageType SCHEMA = MessageTypeParser.parseMessageType(
            "message sample { required int64 sample_index; repeated double state; repeated double action;"
                    + " required binary image; }");

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        scratch = dir;
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int warmBatches = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        int coldBatches = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        List<byte[]> jpegs = List.of();
        crcs = new long[rows];
        Path lakeDir = dir.resolve("s3root/lakebucket");
        if (!Files.exists(dir.resolve("lake.done"))) {
            long t0 = System.nanoTime();
            buildLake(lakeDir, rows, jpegs);
            Files.writeString(dir.resolve("lake.done"), "ok");
            emit(Map.of("step", "build_lake", "rows", rows, "seconds", (System.nanoTime() - t0) / 1e9));
        }
        Path pqDefault = dir.resolve("default.parquet");
        Path pqTuned = dir.resolve("tuned.parquet");
        if (!Files.exists(dir.resolve("parquet.done"))) {
            long t0 = System.nanoTime();
            writeParquet(lakeDir, pqDefault, pqTuned);
            Files.writeString(dir.resolve("parquet.done"), "ok");
            emit(Map.of("step", "write_parquet", "seconds", (System.nanoTime() - t0) / 1e9,
                    "default_bytes", Files.size(pqDefault), "tuned_bytes", Files.size(pqTuned)));
        }
        loadCrcs(lakeDir);
        List<String> cols = TrainsetLoader.columns(LoaderOptions.builder().build());
        try (Lake lake = Lake.open(lakeDir); LakeTable t = lake.table(TrainsetTables.SAMPLES,
                TableRef.version(Trainsets.open(lake, TAG).samplesVersion()));
                TrainsetLoader get = TrainsetLoader.open(lake, TAG, LoaderOptions.builder().threads(1).build());
                RootAllocator alloc = new RootAllocator();
                // the peer: Lance itself, on the same dataset version the loader reads (read-only)
                org.lance.Dataset lance = org.lance.Dataset.open().allocator(alloc).uri(t.uri())
                        .readOptions(new org.lance.ReadOptions.Builder().setVersion(t.version()).build()).build()) {
            if (PARTS.contains("latency") || PARTS.contains("cold")) {
                latency(lance, get, cols, jpegs, pqTuned, pqDefault, warmBatches, coldBatches);
            }
            if (PARTS.contains("throughput")) {
                throughput(lake);
            }
        }
        if (PARTS.contains("s3")) {
            s3(dir, lakeDir, warmBatches, jpegs);
        }
    }

    /** Which parts run: env LOADER_BENCH_PARTS, a comma list of latency, cold, throughput, s3 (default all). */
    static final java.util.Set<String> PARTS = java.util.Set.of(
            System.getenv().getOrDefault("LOADER_BENCH_PARTS", "latency,cold,throughput,s3").split(","));

    static void latency(org.lance.Dataset t, TrainsetLoader get, List<String> cols, List<byte[]> jpegs, Path pqTuned,
            Path pqDefault, int warmBatches, int coldBatches) throws IOException {
        ParquetPeer tunedPeer = new ParquetPeer(pqTuned);
        ParquetPeer defaultPeer = new ParquetPeer(pqDefault);
        Map<String, ParquetPeer> peers = Map.of("parquet_tuned", tunedPeer, "parquet_default", defaultPeer);
        long n = t.countRows();
        Map<String, Supplier<Runnable>> methods = new LinkedHashMap<>();
        SplittableRandom rnd = new SplittableRandom(42);
        methods.put("lance_take", () -> {
            long[] idx = batch(rnd, n);
            return () -> lanceTake(t, idx, cols, jpegs);
        });
        methods.put("loader_get", () -> {
            long[] idx = batch(rnd, n);
            return () -> check(get.get(idx), idx, jpegs);
        });
        methods.put("parquet_tuned", () -> {
            long[] idx = batch(rnd, n);
            return () -> tunedPeer.read(idx);
        });
        methods.put("parquet_default", () -> {
            long[] idx = batch(rnd, n);
            return () -> defaultPeer.read(idx);
        });
        if (PARTS.contains("latency")) {
            // warm: a few untimed rounds first, then timed rounds interleaved method by method
            Map<String, List<Double>> warm = new LinkedHashMap<>();
            Map<String, long[]> read = new LinkedHashMap<>();
            for (int round = 0; round < warmBatches + 5; round++) {
                for (Map.Entry<String, Supplier<Runnable>> m : methods.entrySet()) {
                    if (m.getKey().equals("parquet_default") && round % 10 != 0) {
                        continue; // 10x fewer rounds of the slow one
                    }
                    Runnable r = m.getValue().get();
                    ParquetPeer pp = peers.get(m.getKey());
                    long before = pp == null ? 0 : pp.in.bytes.get();
                    long s = System.nanoTime();
                    r.run();
                    if (round >= 5) {
                        warm.computeIfAbsent(m.getKey(), k -> new ArrayList<>()).add((System.nanoTime() - s) / 1e6);
                        if (pp != null) {
                            long[] c = read.computeIfAbsent(m.getKey(), k -> new long[2]);
                            c[0] += pp.in.bytes.get() - before;
                            c[1]++;
                        }
                    }
                }
            }
            warm.forEach((k, v) -> {
                Map<String, Object> m = stats("warm", k, v);
                if (read.containsKey(k)) {
                    m.put("read_mib_per_batch", read.get(k)[0] / (double) read.get(k)[1] / (1 << 20));
                }
                emit(m);
            });
        }
        if (PARTS.contains("cold")) {
            // cold: drop the page cache before each batch
            Map<String, List<Double>> cold = new LinkedHashMap<>();
            for (int round = 0; round < coldBatches; round++) {
                for (Map.Entry<String, Supplier<Runnable>> m : methods.entrySet()) {
                    Runnable r = m.getValue().get();
                    dropCaches();
                    long s = System.nanoTime();
                    r.run();
                    cold.computeIfAbsent(m.getKey(), k -> new ArrayList<>()).add((System.nanoTime() - s) / 1e6);
                }
            }
            cold.forEach((k, v) -> emit(stats("cold", k, v)));
        }
    }

    /**
     * Loader throughput with prefetch (2 threads, prefetch 8): image bytes, then decoded images, and as the peer of
     * the decoded run a plain OpenCV loop decoding the same JPEGs on as many threads (imdecode to RGB into a reused
     * Mat, one bulk copy out): the ceiling of decoding alone on this machine at this moment. The decoded loader and
     * the peer alternate twice so that both see the same load.
     */
    static void throughput(Lake lake) throws Exception {
        int threads = 2;
        for (LoaderOptions.Images mode : List.of(LoaderOptions.Images.BYTES, LoaderOptions.Images.DECODED)) {
            LoaderOptions o = LoaderOptions.builder().threads(threads).prefetch(8).images(mode).seed(7).build();
            try (TrainsetLoader l = TrainsetLoader.open(lake, TAG, o)) {
                Iterator<List<Sample>> warmup = l.epoch(1);
                for (int b = 0; b < 5; b++) {
                    warmup.next(); // natives unpacked, decoders and JIT warm
                }
                int rounds = mode == LoaderOptions.Images.BYTES ? 1 : 2;
                double loaderSamples = 0;
                double loaderSecs = 0;
                double peerSamples = 0;
                double peerSecs = 0;
                for (int round = 0; round < rounds; round++) {
                    int batches = (int) Math.min(l.batchesPerEpoch() / rounds,
                            mode == LoaderOptions.Images.BYTES ? 300 : 100);
                    List<Double> waits = new ArrayList<>();
                    List<byte[]> seen = new ArrayList<>();
                    Iterator<List<Sample>> it = l.epoch(round);
                    long samples = 0;
                    long t0 = System.nanoTime();
                    for (int b = 0; b < batches; b++) {
                        long s = System.nanoTime();
                        List<Sample> batch = it.next();
                        waits.add((System.nanoTime() - s) / 1e6);
                        samples += batch.size();
                        if (mode == LoaderOptions.Images.DECODED) {
                            for (Sample x : batch) {
                                if (x.images().get(0).decoded().width() != 320) {
                                    throw new IllegalStateException("decoded width " + x.images().get(0).decoded().width());
                                }
                                seen.add(x.images().get(0).bytes());
                            }
                        }
                    }
                    double secs = (System.nanoTime() - t0) / 1e9;
                    loaderSamples += samples;
                    loaderSecs += secs;
                    Map<String, Object> m = stats("warm", "loader_epoch_" + mode.name().toLowerCase(Locale.ROOT), waits);
                    m.put("samples_per_s", samples / secs);
                    emit(m);
                    if (mode == LoaderOptions.Images.DECODED) {
                        double ps = opencvDecodeLoop(seen, threads);
                        peerSamples += seen.size();
                        peerSecs += ps;
                        emit(Map.of("method", "opencv_decode_loop", "threads", threads, "images", seen.size(),
                                "samples_per_s", seen.size() / ps));
                    }
                }
                if (mode == LoaderOptions.Images.DECODED) {
                    emit(Map.of("method", "decoded_loader_vs_opencv_loop", "loader_samples_per_s",
                            loaderSamples / loaderSecs, "opencv_samples_per_s", peerSamples / peerSecs, "ratio",
                            (loaderSamples / loaderSecs) / (peerSamples / peerSecs)));
                }
            }
        }
    }

    /** Decodes the JPEGs to RGB on {@code threads} threads (interleaved split); @return seconds taken. */
    static double opencvDecodeLoop(List<byte[]> jpegs, int threads) throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Callable<Long>> work = new ArrayList<>();
            for (int k = 0; k < threads; k++) {
                int first = k;
                work.add(() -> {
                    long sum = 0;
                    try (org.bytedeco.javacpp.BytePointer in = new org.bytedeco.javacpp.BytePointer(256 * 1024L);
                            org.bytedeco.opencv.opencv_core.Mat out = new org.bytedeco.opencv.opencv_core.Mat()) {
                        for (int i = first; i < jpegs.size(); i += threads) {
                            byte[] j = jpegs.get(i);
                            in.position(0).put(j, 0, j.length);
                            try (org.bytedeco.opencv.opencv_core.Mat buf = new org.bytedeco.opencv.opencv_core.Mat(1,
                                    j.length, org.bytedeco.opencv.global.opencv_core.CV_8UC1, in)) {
                                org.bytedeco.opencv.global.opencv_imgcodecs.imdecode(buf,
                                        org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_COLOR_RGB, out);
                            }
                            byte[] px = new byte[out.cols() * out.rows() * 3];
                            out.data().get(px);
                            sum += px[px.length / 2];
                        }
                    }
                    return sum;
                });
            }
            long t0 = System.nanoTime();
            for (java.util.concurrent.Future<Long> f : pool.invokeAll(work)) {
                f.get();
            }
            return (System.nanoTime() - t0) / 1e9;
        } finally {
            pool.shutdown();
        }
    }


    /** Loader batch latency with the lake behind an S3 API (s3proxy on loopback) against a warmed local cache. */
    static void s3(Path dir, Path lakeDir, int batches, List<byte[]> jpegs) throws Exception {
        // the lake's folder is the bucket: s3proxy serves the folders under its parent as buckets
        try (S3TestServer server = S3TestServer.start(lakeDir.getParent())) {
            Lake.Options opts = Lake.Options.defaults().withEnvironment(Map.of()).withStorage(StorageConfig.builder()
                    .endpoint(server.endpoint()).region(S3TestServer.REGION)
                    .credentials(S3TestServer.KEY, S3TestServer.SECRET).build());
            LoaderOptions o = LoaderOptions.builder().threads(1).build();
            Path cacheDir = dir.resolve("cache");
            try (TrainsetCache c = TrainsetCache.open(cacheDir, "s3://lakebucket", opts)) {
                WarmPlan plan = c.plan(TAG, o);
                Warmer.Report r = c.warm(plan, 16, Warmer.Progress.NONE);
                emit(Map.of("step", "warm_from_s3", "files", plan.files().size(), "bytes", plan.bytes(),
                        "fetched_bytes", r.fetchedBytes(), "seconds", r.elapsedNs() / 1e9, "mib_per_s",
                        r.mibPerSecond()));
                try (TrainsetLoader viaS3 = TrainsetLoader.open(c.originLake(), TAG, o);
                        TrainsetLoader viaCache = c.loader(TAG, o)) {
                    SplittableRandom rnd = new SplittableRandom(3);
                    List<Double> s3 = new ArrayList<>();
                    List<Double> cached = new ArrayList<>();
                    for (int b = 0; b < batches + 5; b++) {
                        long[] idx = batch(rnd, viaS3.size());
                        long s = System.nanoTime();
                        check(viaS3.get(idx), idx, jpegs);
                        double a = (System.nanoTime() - s) / 1e6;
                        idx = batch(rnd, viaS3.size());
                        s = System.nanoTime();
                        check(viaCache.get(idx), idx, jpegs);
                        double z = (System.nanoTime() - s) / 1e6;
                        if (b >= 5) {
                            s3.add(a);
                            cached.add(z);
                        }
                    }
                    emit(stats("warm", "loader_get_s3_origin", s3));
                    Map<String, Object> m = stats("warm", "loader_get_local_cache", cached);
                    m.put("cache_hit_ratio", c.stats().hitRatio());
                    emit(m);
                }
            }
        }
    }

    static long[] batch(SplittableRandom r, long n) {
        long[] idx = new long[64];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = r.nextLong(n);
        }
        return idx;
    }

    /** Lance {@code take} of the loader's columns on the open dataset, read straight from its Arrow vectors. */
    static void lanceTake(org.lance.Dataset t, long[] idx, List<String> cols, List<byte[]> jpegs) {
        long[] sorted = Arrays.stream(idx).distinct().sorted().toArray();
        int[] seen = {0};
        List<Long> ids = Arrays.stream(sorted).boxed().toList();
        try (ArrowReader reader = t.take(ids, cols)) {
            while (reader.loadNextBatch()) {
                VectorSchemaRoot b = reader.getVectorSchemaRoot();
                BigIntVector si = (BigIntVector) b.getVector("sample_index");
                ListVector state = (ListVector) b.getVector("state");
                ListVector images = (ListVector) b.getVector("images");
                VarBinaryVector hot = (VarBinaryVector) ((StructVector) images.getDataVector()).getChild("hot_jpeg");
                for (int r = 0; r < b.getRowCount(); r++) {
                    long want = sorted[seen[0]++];
                    if (si.get(r) != want) {
                        throw new IllegalStateException("lance take: row " + si.get(r) + " for " + want);
                    }
                    long src = (long) ((Float8Vector) state.getDataVector()).get(state.getElementStartIndex(r));
                    if (crc(hot.get(images.getElementStartIndex(r))) != crcs[(int) src]) {
                        throw new IllegalStateException("lance take: wrong image in row " + want);
                    }
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        if (seen[0] != sorted.length) {
            throw new IllegalStateException("lance take: " + seen[0] + " rows for " + sorted.length);
        }
    }

    static void check(List<Sample> got, long[] idx, List<byte[]> jpegs) {
        for (int i = 0; i < idx.length; i++) {
            Sample s = got.get(i);
            if (s.sampleIndex() != idx[i]
                    || crc(s.images().get(0).bytes()) != crcs[(int) s.state()[0]]) {
                throw new IllegalStateException("loader: wrong sample for index " + idx[i]);
            }
        }
    }

    /**
     * Parquet read of 64 rows the way a random-access reader does it with Apache Parquet Java and the page index:
     * the footer is parsed once and kept (as Lance keeps its manifest in memory between batches), then per batch a
     * {@link ParquetFileReader} reads, of each row group holding asked rows, only the pages holding them:
     * {@code readFilteredRowGroup(block, rowRanges)} with the row ranges of exactly the asked rows, which the
     * reader maps through each column's offset index to the pages overlapping them (one page per image in the
     * tuned file; in the default file a page holds ~50 images and the sample_index column is one page per row
     * group). The record reader then skips, inside those pages, the rows not asked for. Row r of the file is
     * sample r (the writer checks that). Every row is checked by value: its sample_index is the one asked for, in
     * order, and its image's CRC32 is the one stored for its source row; and the number of rows too.
     */
    static final class ParquetPeer {
        final Path file;
        final CountingInputFile in;
        final ParquetMetadata footer;
        final MessageType schema;
        final long[] firstRow;
        /** kept open across batches: it caches each row group's column and offset indexes once read */
        final ParquetFileReader reader;
        /** per row group: do all columns have the same page boundaries (true in the tuned file: a row a page) */
        final boolean[] aligned;

        ParquetPeer(Path file) throws IOException {
            this.file = file;
            this.in = new CountingInputFile(file);
            try (ParquetFileReader r = ParquetFileReader.open(in)) {
                footer = r.getFooter();
                aligned = new boolean[footer.getBlocks().size()];
                for (int b = 0; b < aligned.length; b++) {
                    List<Long> first = null;
                    aligned[b] = true;
                    for (var col : footer.getBlocks().get(b).getColumns()) {
                        var oi = r.readOffsetIndex(col);
                        List<Long> rows = new ArrayList<>();
                        for (int p = 0; oi != null && p < oi.getPageCount(); p++) {
                            rows.add(oi.getFirstRowIndex(p));
                        }
                        aligned[b] &= oi != null && (first == null || first.equals(rows));
                        first = rows;
                    }
                }
            }
            schema = footer.getFileMetaData().getSchema();
            ParquetReadOptions o = ParquetReadOptions.builder(new PlainParquetConfiguration()).useColumnIndexFilter(true)
                    .useStatsFilter(false).useDictionaryFilter(false).useBloomFilter(false).useRecordFilter(false)
                    .build();
            reader = ParquetFileReader.open(in, footer, o, in.newStream());
            firstRow = new long[footer.getBlocks().size() + 1];
            for (int b = 0; b < footer.getBlocks().size(); b++) {
                firstRow[b + 1] = firstRow[b] + footer.getBlocks().get(b).getRowCount();
            }
            in.bytes.set(0);
        }

        void read(long[] idx) {
            long[] want = Arrays.stream(idx).distinct().sorted().toArray();
            int got = 0;
            ParquetFileReader r = reader;
            try {
                MessageColumnIO io = new ColumnIOFactory().getColumnIO(schema);
                int w = 0;
                for (int b = 0; b < firstRow.length - 1 && w < want.length; b++) {
                    int from = w;
                    while (w < want.length && want[w] < firstRow[b + 1]) {
                        w++;
                    }
                    if (w == from) {
                        continue;
                    }
                    long rows = firstRow[b + 1] - firstRow[b];
                    long base = firstRow[b];
                    // parquet-java <= 1.18.1 (apache/parquet-java#3747) can pair the last selected row of one column
                    // with an earlier row of another when their page boundaries differ: there, one row per read
                    int step = aligned[b] ? w - from : 1;
                    for (int k0 = from; k0 < w; k0 += step) {
                        int k1 = Math.min(w, k0 + step);
                        RowRanges ranges = RowRanges.create(rows, Arrays.stream(want, k0, k1)
                                .mapToInt(x -> (int) (x - base)).iterator(), new RowPerPage(rows));
                        PageReadStore pages = r.readFilteredRowGroup(b, ranges);
                        if (pages.getRowCount() != k1 - k0) {
                            throw new IllegalStateException(file.getFileName() + ": row group " + b + " gave "
                                    + pages.getRowCount() + " rows for " + (k1 - k0) + " asked");
                        }
                        RecordReader<Group> rr = io.getRecordReader(pages, new GroupRecordConverter(schema),
                                FilterCompat.NOOP);
                        for (int k = k0; k < k1; k++) {
                            Group g = rr.read();
                            long si = g.getLong("sample_index", 0);
                            if (si != want[k]) {
                                throw new IllegalStateException(file.getFileName() + ": row " + si + " for " + want[k]);
                            }
                            long src = (long) g.getDouble("state", 0);
                            if (crc(g.getBinary("image", 0).getBytes()) != crcs[(int) src]) {
                                throw new IllegalStateException(file.getFileName() + ": wrong image in row " + si);
                            }
                            got++;
                        }
                    }
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            if (got != want.length) {
                throw new IllegalStateException(file.getFileName() + ": " + got + " rows for " + want.length + " asked");
            }
        }
    }

    /** Row ranges of single rows: an offset index whose page i is row i (only the row indexes are used). */
    record RowPerPage(long rows) implements org.apache.parquet.internal.column.columnindex.OffsetIndex {
        @Override
        public int getPageCount() {
            return (int) rows;
        }

        @Override
        public long getOffset(int page) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int getCompressedPageSize(int page) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long getFirstRowIndex(int page) {
            return page;
        }
    }

    /** A local {@link InputFile} read with positional channel reads, counting the bytes read. */
    static final class CountingInputFile implements InputFile {
        final Path path;
        final java.util.concurrent.atomic.AtomicLong bytes = new java.util.concurrent.atomic.AtomicLong();

        CountingInputFile(Path path) {
            this.path = path;
        }

        @Override
        public long getLength() throws IOException {
            return Files.size(path);
        }

        @Override
        public SeekableInputStream newStream() throws IOException {
            java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(path);
            long[] pos = {0};
            // an 8 KiB read buffer, as Hadoop's streams have: the Thrift footer and page-index decoders read a few
            // bytes at a time
            byte[] buf = new byte[8 * 1024];
            long[] bufAt = {-1};
            int[] bufLen = {0};
            java.io.InputStream is = new java.io.InputStream() {
                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (len == 0) {
                        return 0;
                    }
                    if (bufAt[0] < 0 || pos[0] < bufAt[0] || pos[0] >= bufAt[0] + bufLen[0]) {
                        if (len >= 8192) { // page reads go straight through
                            int n = ch.read(java.nio.ByteBuffer.wrap(b, off, len), pos[0]);
                            if (n > 0) {
                                pos[0] += n;
                                bytes.addAndGet(n);
                            }
                            return n;
                        }
                        int n = ch.read(java.nio.ByteBuffer.wrap(buf), pos[0]);
                        if (n <= 0) {
                            return -1;
                        }
                        bytes.addAndGet(n);
                        bufAt[0] = pos[0];
                        bufLen[0] = n;
                    }
                    int at = (int) (pos[0] - bufAt[0]);
                    int n = Math.min(len, bufLen[0] - at);
                    System.arraycopy(buf, at, b, off, n);
                    pos[0] += n;
                    return n;
                }

                @Override
                public void close() throws IOException {
                    ch.close();
                }
            };
            return new DelegatingSeekableInputStream(is) {
                @Override
                public long getPos() {
                    return pos[0];
                }

                @Override
                public void seek(long newPos) {
                    pos[0] = newPos;
                }
            };
        }
    }

    static void writeParquet(Path lakeDir, Path pqDefault, Path pqTuned) throws IOException {
        Files.deleteIfExists(pqDefault);
        Files.deleteIfExists(pqTuned);
        try (Lake lake = Lake.open(lakeDir); LakeTable t = lake.table(TrainsetTables.SAMPLES,
                TableRef.version(Trainsets.open(lake, TAG).samplesVersion()));
                ParquetWriter<Group> def = ExampleParquetWriter.builder(new LocalOutputFile(pqDefault)).withType(SCHEMA)
                        .build();
                ParquetWriter<Group> tuned = ExampleParquetWriter.builder(new LocalOutputFile(pqTuned)).withType(SCHEMA)
                        .withRowGroupSize(1000L * 21_000) // ~1,000 rows of ~21 KB
                        .withPageSize(8 * 1024).withPageRowCountLimit(1).withMinRowCountForPageSizeCheck(1)
                        .withMaxRowCountForPageSizeCheck(1)
                        .withDictionaryEncoding(false).withPageWriteChecksumEnabled(false).build()) {
            SimpleGroupFactory f = new SimpleGroupFactory(SCHEMA);
            long[] written = {0};
            t.scan(ScanRequest.builder().columns(List.of("sample_index", "state", "action", "images")).build(), b -> {
                ColumnView si = b.column("sample_index");
                ColumnView state = b.column("state");
                ColumnView action = b.column("action");
                ColumnView images = b.column("images");
                ColumnView hot = images.items().field("hot_jpeg");
                for (int r = 0; r < b.rowCount(); r++) {
                    if (si.getLong(r) != written[0]++) {
                        throw new IllegalStateException("trainset_samples scan: sample " + si.getLong(r) + " at row "
                                + (written[0] - 1) + "; the Parquet peer needs row r = sample r");
                    }
                    Group g = f.newGroup().append("sample_index", si.getLong(r));
                    for (double v : state.getDoubles(r)) {
                        g.add("state", v);
                    }
                    for (double v : action.getDoubles(r)) {
                        g.add("action", v);
                    }
                    g.add("image", org.apache.parquet.io.api.Binary.fromConstantByteArray(
                            hot.getBytes(images.listStart(r))));
                    try {
                        def.write(g);
                        tuned.write(g);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
            });
        }
    }

    static void buildLake(Path lakeDir, int rows, List<byte[]> unused) throws IOException {
        Files.createDirectories(lakeDir.getParent());
        long jpegNs = 0;
        long commitNs = 0;
        try (Lake lake = Lake.init(lakeDir)) {
            int episodes = (rows + FRAMES_PER_EPISODE - 1) / FRAMES_PER_EPISODE;
            List<FrameRow> frames = new ArrayList<>();
            List<EpisodeRow> eps = new ArrayList<>();
            for (int e = 0; e < episodes; e++) {
                String id = String.format("ep-%06d", e);
                long t0 = 1_700_000_000_000_000_000L + e * 60_000_000_000L;
                int k = Math.min(FRAMES_PER_EPISODE, rows - e * FRAMES_PER_EPISODE);
                long g0 = System.nanoTime();
                long base = (long) e * FRAMES_PER_EPISODE;
                byte[][] imgs = new byte[k][];
                java.util.stream.IntStream.range(0, k).parallel().forEach(j -> {
                    try {
                        imgs[j] = jpeg(base + j);
                    } catch (IOException x) {
                        throw new java.io.UncheckedIOException(x);
                    }
                });
                jpegNs += System.nanoTime() - g0;
                for (int j = 0; j < k; j++) {
                    long src = base + j;
                    double[] state = new double[7];
                    double[] action = new double[7];
                    state[0] = src;
                    for (int d = 1; d < 7; d++) {
                        state[d] = Math.sin(src * 0.01 + d);
                        action[d] = Math.cos(src * 0.01 + d);
                    }
                    action[0] = -src;
                    frames.add(new FrameRow(id, j, t0 + j * 100_000_000L, state, action, 0.5,
                            List.of(new ImageLocator("/cam0", "file:///nonexistent/raw.mcap", -1, 0, 1, "", 0L, "jpeg",
                                    320, 240)), List.of(), List.of(),
                            List.of(new ImageEnrichment(1.0, false, 0.0, false, 0L, imgs[j], null, null)), null, null));
                }
                eps.add(new EpisodeRow(id, "rec-" + e, "robot-1", "pick", "lab", "op", "success", t0,
                        t0 + (k - 1) * 100_000_000L, (k - 1) * 100_000_000L, "/cam0", (long) k, "pass", List.of(), null,
                        "{}"));
                if (eps.size() == 20 || e == episodes - 1) {
                    long c0 = System.nanoTime();
                    lake.begin("ingest").putFrames(frames).putEpisodes(eps).commit();
                    commitNs += System.nanoTime() - c0;
                    frames.clear();
                    eps.clear();
                }
            }
            long b0 = System.nanoTime();
            TrainsetBuilder.build(lake, TrainsetSpec.builder(TAG).baseRatio(1.0).seed(1).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            emit(Map.of("step", "build_lake_parts", "jpeg_seconds", jpegNs / 1e9, "commit_seconds", commitNs / 1e9,
                    "trainset_build_seconds", (System.nanoTime() - b0) / 1e9));
        }
    }

    /** The CRC32 of every row's image, read back from the lake (the build is reused across runs). */
    static void loadCrcs(Path lakeDir) {
        try (Lake lake = Lake.open(lakeDir); LakeTable t = lake.table(TrainsetTables.SAMPLES,
                TableRef.version(Trainsets.open(lake, TAG).samplesVersion()))) {
            t.scan(ScanRequest.builder().columns(List.of("state", "images")).build(), b -> {
                ColumnView state = b.column("state");
                ColumnView images = b.column("images");
                ColumnView hot = images.items().field("hot_jpeg");
                for (int r = 0; r < b.rowCount(); r++) {
                    int src = (int) state.items().getDouble(state.listStart(r));
                    byte[] img = hot.getBytes(images.listStart(r));
                    if (img.length < 1000 || (img[0] & 0xFF) != 0xFF || (img[1] & 0xFF) != 0xD8) {
                        throw new IllegalStateException("row of source " + src + ": not a JPEG");
                    }
                    crcs[src] = crc(img);
                }
            });
        }
        for (long[] x : new long[][] {crcs}) {
            for (int i = 0; i < x.length; i++) {
                if (x[i] == 0) {
                    throw new IllegalStateException("no image for source " + i);
                }
            }
        }
    }

    static long crc(byte[] b) {
        java.util.zip.CRC32 c = new java.util.zip.CRC32();
        c.update(b);
        return c.getValue();
    }

    /**
     * The image of source index {@code i}: a 320x240 JPEG of about 20 KB (quality 75), unique per index (seeded
     * noise over gradients). Encoded with OpenCV's libjpeg-turbo: the JDK's ImageIO encoder (and filling the
     * image pixel by pixel through {@code setRGB}) made this the slow part of building the bench lake.
     */
    static byte[] jpeg(long src) throws IOException {
        int i = (int) src;
        byte[] px = new byte[320 * 240 * 3];
        SplittableRandom r = new SplittableRandom(src);
        for (int y = 0, o = 0; y < 240; y++) {
            for (int x = 0; x < 320; x++, o += 3) {
                int n = r.nextInt(24);
                px[o + 2] = (byte) (x * 255 / 320 + i * 4 + n); // BGR order, as OpenCV takes it
                px[o + 1] = (byte) (y * 255 / 240 + n);
                px[o] = (byte) ((x + y + i * 9) / 3 + n);
            }
        }
        try (org.bytedeco.opencv.opencv_core.Mat m = new org.bytedeco.opencv.opencv_core.Mat(240, 320,
                org.bytedeco.opencv.global.opencv_core.CV_8UC3);
                org.bytedeco.javacpp.BytePointer out = new org.bytedeco.javacpp.BytePointer();
                org.bytedeco.javacpp.IntPointer params = new org.bytedeco.javacpp.IntPointer(
                        org.bytedeco.opencv.global.opencv_imgcodecs.IMWRITE_JPEG_QUALITY, 75)) {
            m.data().put(px);
            if (!org.bytedeco.opencv.global.opencv_imgcodecs.imencode(".jpg", m, out, params)) {
                throw new IOException("OpenCV could not encode the JPEG of source " + src);
            }
            byte[] b = new byte[(int) out.limit()];
            out.get(b);
            return b;
        }
    }

    /** The bench's scratch folder: its files (lake and Parquet) are what a cold round evicts from the page cache. */
    static Path scratch;

    /**
     * Evicts the bench's files from the page cache: {@code posix_fadvise(POSIX_FADV_DONTNEED)} on every file under the
     * scratch folder, through GNU dd's {@code iflag=nocache count=0}, after a sync. Unlike {@code drop_caches} this needs
     * no root and works in a container; it drops exactly the files read, not the whole machine's cache.
     */
    static void dropCaches() {
        try {
            Process p = new ProcessBuilder("sh", "-c", "sync; find \"$0\" -type f -exec dd iflag=nocache count=0 status=none if={} \\;",
                    scratch.toString()).inheritIO().start();
            if (p.waitFor() != 0) {
                throw new IllegalStateException("cannot evict " + scratch + " from the page cache (dd exit " + p.exitValue() + ")");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot evict " + scratch + " from the page cache: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while evicting the page cache", e);
        }
    }

    static Map<String, Object> stats(String mode, String method, List<Double> ms) {
        double[] s = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cache", mode);
        m.put("method", method);
        m.put("batches", s.length);
        m.put("p50_ms", pct(s, 0.5));
        m.put("p99_ms", pct(s, 0.99));
        m.put("mean_ms", Arrays.stream(s).average().orElse(0));
        return m;
    }

    static double pct(double[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    }

    static void emit(Map<String, ?> m) {
        StringBuilder b = new StringBuilder("{");
        m.forEach((k, v) -> b.append(b.length() > 1 ? ", " : "").append('"').append(k).append("\": ")
                .append(v instanceof String ? "\"" + v + "\"" : v instanceof Double d ? String.format(Locale.ROOT, "%.3f", d)
                        : String.valueOf(v)));
        System.out.println(b.append('}'));
    }
}
