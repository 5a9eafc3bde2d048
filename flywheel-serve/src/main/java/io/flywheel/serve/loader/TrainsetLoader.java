package io.flywheel.serve.loader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetTables;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.ingest.RawLocator;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.RowBatch;
import io.flywheel.lake.TableRef;

/**
 * Reads a training set for a trainer: random access by sample index, epochs in an order shuffled
 * by seed, batches read ahead by worker threads.
 *
 * <p>The set is the tagged version of {@code trainset_samples} (a standard Lance dataset; Python
 * trainers can read the same rows with {@code lance.dataset(uri, version=tag)}). Rows are read
 * with Lance {@code take} by row offset, indices sorted per batch for locality and handed back in
 * the order asked. Images come from the hot copy ({@code images[].hot_jpeg}, written by enrich)
 * when present, else from the raw file through the frame's locator.
 *
 * <p>Determinism: epoch {@code e}'s order is a Fisher-Yates shuffle driven by
 * {@code SplittableRandom(seed).split()} advanced {@code e} times, so the same seed gives the same
 * batches on any machine, independent of threads and prefetch. Memory: at most
 * {@code prefetch} batches are in flight or queued. Thread safety: one consumer thread per loader;
 * workers each own a table handle and a raw-file reader.
 */
public final class TrainsetLoader implements AutoCloseable {
    private static final List<String> BASE_COLUMNS = List.of(TrainsetTables.SAMPLE_INDEX, TrainsetTables.EPISODE_INDEX,
            "episode_id", "frame_index", "timestamp_ns", "state", "action", "gripper");

    private final Lake lake;
    private final Trainset set;
    private final LoaderOptions options;
    private final long size;
    private final List<String> columns;
    private final ExecutorService pool;
    private final BlockingQueue<Worker> workers;
    private final List<Worker> all = Collections.synchronizedList(new ArrayList<>());
    private final java.util.function.Supplier<RawSource> rawSources;

    private TrainsetLoader(Lake lake, Trainset set, LoaderOptions options, java.util.function.Supplier<RawSource> raw) {
        this.lake = lake;
        this.set = set;
        this.options = options;
        this.rawSources = raw;
        this.size = set.sampleCount();
        this.columns = columns(options);
        this.workers = new ArrayBlockingQueue<>(options.threads() + 1);
        for (int i = 0; i < options.threads() + 1; i++) {
            Worker w = new Worker();
            all.add(w);
            workers.add(w);
        }
        this.pool = Executors.newFixedThreadPool(options.threads(), r -> {
            Thread t = new Thread(r, "trainset-loader");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * @param lake an open lake (stays open while the loader is used)
     * @param tag the training set's tag
     * @param options loader options
     * @return the loader; close it
     * @throws io.flywheel.error.NotFoundException when there is no such set
     */
    public static TrainsetLoader open(Lake lake, String tag, LoaderOptions options) {
        return open(lake, tag, options, () -> RawSource.direct(lake.rawStorage()));
    }

    /**
     * Opens a set reading raw images through the given sources (e.g. a local cache's).
     *
     * @param lake an open lake (stays open while the loader is used)
     * @param tag the training set's tag
     * @param options loader options
     * @param rawSources makes one raw-image source per worker thread
     * @return the loader; close it
     * @throws io.flywheel.error.NotFoundException when there is no such set
     */
    public static TrainsetLoader open(Lake lake, String tag, LoaderOptions options,
            java.util.function.Supplier<RawSource> rawSources) {
        return new TrainsetLoader(lake, Trainsets.open(lake, tag), options, rawSources);
    }

    /**
     * @param options loader options
     * @return the columns of {@code trainset_samples} a loader with these options reads (what a warm
     *     must fetch)
     */
    public static List<String> columns(LoaderOptions options) {
        List<String> cols = new ArrayList<>(BASE_COLUMNS);
        if (options.images() != LoaderOptions.Images.NONE) {
            cols.add("images");
        }
        return List.copyOf(cols);
    }

    /** @return the set being read */
    public Trainset trainset() {
        return set;
    }

    private volatile Map<String, io.flywheel.curate.trainset.ValueNames> valueNames;

    /**
     * The names of a sample's {@link Sample#state()} and {@link Sample#action()} values: its episode's, as the set's
     * lineage keeps them (for a set built before it kept them, read from {@code episodes} once, at the first call).
     *
     * @param episodeId an episode of the set ({@link Sample#episodeId()})
     * @return its names, {@link io.flywheel.curate.trainset.ValueNames#NONE} when unknown
     */
    public io.flywheel.curate.trainset.ValueNames valueNames(String episodeId) {
        java.util.Optional<io.flywheel.curate.trainset.ValueNames> kept = Trainsets.valueNames(set, episodeId);
        if (kept.isPresent()) {
            return kept.get();
        }
        Map<String, io.flywheel.curate.trainset.ValueNames> m = valueNames; // a set built before its lineage kept them
        if (m == null) {
            List<String> ids = new ArrayList<>();
            for (io.flywheel.curate.trainset.TrainsetEpisode e : Trainsets.episodes(lake, set)) {
                ids.add(e.info().episodeId());
            }
            m = Trainsets.valueNames(lake, ids);
            valueNames = m;
        }
        return m.getOrDefault(episodeId, io.flywheel.curate.trainset.ValueNames.NONE);
    }

    /** @return number of samples */
    public long size() {
        return size;
    }

    /** @return batches per epoch */
    public long batchesPerEpoch() {
        long b = options.batchSize();
        return options.dropLast() ? size / b : (size + b - 1) / b;
    }

    /**
     * @param indices sample indices, each in [0, size)
     * @return the samples, in the order asked (an index asked twice comes twice)
     * @throws IndexOutOfBoundsException naming the first bad index
     */
    public List<Sample> get(long... indices) {
        Worker w = take();
        try {
            return w.read(indices);
        } finally {
            workers.add(w);
        }
    }

    /**
     * @param epoch epoch number, &ge; 0
     * @return the sample order of that epoch: a permutation of [0, size)
     */
    public long[] epochOrder(int epoch) {
        SplittableRandom r = new SplittableRandom(options.seed());
        for (int i = 0; i < epoch; i++) {
            r = r.split();
        }
        r = r.split();
        long[] order = new long[Math.toIntExact(size)];
        Arrays.setAll(order, i -> i);
        for (int i = order.length - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            long t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    /**
     * The batches of an epoch, read ahead by the worker threads.
     *
     * @param epoch epoch number, &ge; 0
     * @return an iterator of batches (lists of {@code batchSize} samples; the last may be shorter
     *     unless dropLast); a read failure surfaces from {@code next()} as an unchecked exception
     */
    public Iterator<List<Sample>> epoch(int epoch) {
        long[] order = epochOrder(epoch);
        long batches = batchesPerEpoch();
        return new Iterator<>() {
            private final ArrayBlockingQueue<Future<List<Sample>>> ahead = new ArrayBlockingQueue<>(options.prefetch());
            private long submitted;
            private long consumed;

            private void fill() {
                while (submitted < batches && ahead.remainingCapacity() > 0) {
                    int from = Math.toIntExact(submitted * options.batchSize());
                    int to = (int) Math.min(order.length, from + (long) options.batchSize());
                    long[] idx = Arrays.copyOfRange(order, from, to);
                    ahead.add(pool.submit(() -> get(idx)));
                    submitted++;
                }
            }

            @Override
            public boolean hasNext() {
                return consumed < batches;
            }

            @Override
            public List<Sample> next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("epoch " + epoch + " has " + batches + " batches");
                }
                fill();
                try {
                    List<Sample> b = ahead.remove().get();
                    consumed++;
                    fill();
                    return b;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for batch " + consumed, e);
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    throw c instanceof RuntimeException r ? r : new IllegalStateException(c.getMessage(), c);
                }
            }
        };
    }

    private Worker take() {
        try {
            return workers.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        pool.shutdownNow();
        try {
            // batches read ahead may still be inside a take: their table handles close after them
            pool.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Worker w : all) {
            w.close();
        }
    }

    /** A table handle, a raw-file reader and an image decoder, used by one thread at a time. */
    private final class Worker implements AutoCloseable {
        private LakeTable table;
        private RawSource raw;
        private RgbDecoder decoder;

        List<Sample> read(long[] indices) {
            for (long i : indices) {
                if (i < 0 || i >= size) {
                    throw new IndexOutOfBoundsException("sample " + i + " is outside [0, " + size + ") of training set '"
                            + set.tag() + "'");
                }
            }
            if (table == null) {
                table = lake.table(TrainsetTables.SAMPLES, TableRef.version(set.samplesVersion()));
            }
            long[] sorted = Arrays.stream(indices).distinct().sorted().toArray();
            Map<Long, Sample> byIndex = new HashMap<>();
            List<RuntimeException> failure = new ArrayList<>();
            table.take(sorted, columns, batch -> {
                Columns c = new Columns(batch, options.images() != LoaderOptions.Images.NONE);
                for (int r = 0; r < batch.rowCount(); r++) {
                    try {
                        Sample s = sample(c, r);
                        byIndex.put(s.sampleIndex(), s);
                    } catch (IOException e) {
                        failure.add(new UncheckedIOException(e.getMessage(), e));
                        return;
                    }
                }
            });
            if (!failure.isEmpty()) {
                throw failure.get(0);
            }
            List<Sample> out = new ArrayList<>(indices.length);
            for (long i : indices) {
                out.add(byIndex.get(i));
            }
            return out;
        }

        private Sample sample(Columns c, int r) throws IOException {
            List<CameraImage> images = c.images == null ? List.of() : images(c, r);
            return new Sample(c.sampleIndex.getLong(r), c.episodeIndex.getInt(r), c.episodeId.getString(r),
                    c.frameIndex.getInt(r), c.timestamp.getLong(r), doubles(c.state, r), doubles(c.action, r),
                    c.gripper.isNull(r) ? Double.NaN : c.gripper.getDouble(r), images);
        }

        private List<CameraImage> images(Columns c, int r) throws IOException {
            ColumnView list = c.images;
            if (list.isNull(r)) {
                return List.of();
            }
            List<CameraImage> out = new ArrayList<>();
            for (int i = list.listStart(r); i < list.listEnd(r); i++) {
                String topic = c.topic.getString(i);
                byte[] bytes;
                String source;
                String format;
                String stored = c.format == null || c.format.isNull(i) ? "" : c.format.getString(i);
                boolean hotCopy = c.hot != null && !c.hot.isNull(i);
                if (hotCopy && (!options.rawImages() || VIDEO.matcher(stored).matches())) {
                    bytes = c.hot.getBytes(i); // the one copy: out of the batch into the sample
                    source = "hot";
                    format = "jpeg";
                } else {
                    format = stored;
                    RawLocator loc = RawLocator.fromStored(c.rawUri.getString(i), c.chunkOffset.getLong(i),
                            c.offset.getLong(i), c.length.getLong(i), c.compression.getString(i), format,
                            intOrZero(c.width, i), intOrZero(c.height, i));
                    if (raw == null) {
                        raw = rawSources.get();
                    }
                    bytes = raw.read(loc);
                    source = "raw";
                }
                io.flywheel.enrich.RgbImage decoded = null;
                if (options.images() == LoaderOptions.Images.DECODED) {
                    if (VIDEO.matcher(format).matches()) {
                        throw new IllegalStateException(topic + " of training set '" + set.tag() + "' is " + format
                                + " video: one access unit cannot be decoded alone; run `flywheel enrich` on the lake"
                                + " so that samples carry hot JPEG copies, then build the set again");
                    }
                    if (decoder == null) {
                        decoder = new RgbDecoder();
                    }
                    decoded = decoder.decode(bytes, format, intOrZero(c.width, i), intOrZero(c.height, i),
                            topic + " of training set '" + set.tag() + "'");
                }
                out.add(new CameraImage(topic, source, format, bytes, decoded));
            }
            return out;
        }

        @Override
        public void close() {
            if (table != null) {
                table.close();
            }
            if (decoder != null) {
                decoder.close();
            }
            if (raw != null) {
                try {
                    raw.close();
                } catch (IOException e) {
                    // closing read-only files: nothing to recover
                }
            }
        }
    }

    /** The columns of one taken batch a sample is read from, each looked up once per batch. */
    private static final class Columns {
        final ColumnView sampleIndex;
        final ColumnView episodeIndex;
        final ColumnView episodeId;
        final ColumnView frameIndex;
        final ColumnView timestamp;
        final ColumnView state;
        final ColumnView action;
        final ColumnView gripper;
        /** {@code images}, or null when the loader reads no images; then the image fields below are null too. */
        final ColumnView images;
        final ColumnView topic;
        final ColumnView hot;
        final ColumnView format;
        final ColumnView rawUri;
        final ColumnView chunkOffset;
        final ColumnView offset;
        final ColumnView length;
        final ColumnView compression;
        final ColumnView width;
        final ColumnView height;

        Columns(RowBatch b, boolean withImages) {
            sampleIndex = b.column(TrainsetTables.SAMPLE_INDEX);
            episodeIndex = b.column(TrainsetTables.EPISODE_INDEX);
            episodeId = b.column("episode_id");
            frameIndex = b.column("frame_index");
            timestamp = b.column("timestamp_ns");
            state = b.column("state");
            action = b.column("action");
            gripper = b.column("gripper");
            images = withImages ? b.column("images") : null;
            ColumnView s = images == null ? null : images.items();
            topic = s == null ? null : s.field("topic");
            hot = optional(s, "hot_jpeg");
            format = optional(s, "format");
            rawUri = s == null ? null : s.field("raw_uri");
            chunkOffset = s == null ? null : s.field("chunk_offset");
            offset = s == null ? null : s.field("offset");
            length = s == null ? null : s.field("length");
            compression = s == null ? null : s.field("compression");
            width = optional(s, "width");
            height = optional(s, "height");
        }

        private static ColumnView optional(ColumnView struct, String field) {
            return struct == null || !struct.hasField(field) ? null : struct.field(field);
        }
    }

    private static final java.util.regex.Pattern VIDEO = java.util.regex.Pattern.compile("(?i)h264|h265|avc|hevc");

    private static int intOrZero(ColumnView v, int i) {
        return v == null || v.isNull(i) ? 0 : v.getInt(i);
    }

    /** @return the list's float64 items, NaN for a null item; empty when the list is null */
    private static double[] doubles(ColumnView l, int r) {
        double[] d = l.getDoubles(r);
        return d == null ? new double[0] : d;
    }

}
