package io.flywheel.enrich;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.enrich.image.FrameAnalysis;
import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.enrich.image.ImageDecodeException;
import io.flywheel.enrich.image.ImageDecoder;
import io.flywheel.enrich.image.ImageFormat;
import io.flywheel.enrich.image.ImageMetrics;
import io.flywheel.enrich.image.PerceptualHash;
import io.flywheel.enrich.motion.GripperState;
import io.flywheel.enrich.video.AnnexB;
import io.flywheel.enrich.video.AnnexBDecoder;
import io.flywheel.enrich.video.VideoCodec;
import io.flywheel.enrich.video.VideoFormatException;
import io.flywheel.enrich.video.VideoFrame;
import io.flywheel.enrich.motion.MotionLabeler;
import io.flywheel.enrich.motion.Phase;
import io.flywheel.raw.RawStorage;
import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.MalformedDataException;
import io.flywheel.ingest.RawLocator;
import io.flywheel.ingest.VideoUnits;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;

/**
 * The computing part of {@code flywheel enrich}, without the lake: given episodes and their frame rows (as the lake
 * holds them), returns the rows with the enrichment columns set, exactly as {@code EnrichJob} commits them. The images
 * are read through their raw locators from a {@link RawStorage}; the decoding runs on a pool of
 * {@link EnrichOptions#threads()} worker threads, the embedder on the calling thread. One instance per process (or
 * per Spark task); not thread-safe: one call at a time.
 *
 * <p>What each column holds, how a damaged image or video unit is recorded ({@code decode_error}) and which frames the
 * stride embeds is described on {@code EnrichJob}.
 */
public final class EpisodeEnricher implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Frames per worker task: one task reads a run of frames of one episode, all cameras, in order. */
    private static final int SEGMENT = 32;

    private final Embedder embedder;
    private final String modelId;
    private final EnrichOptions options;
    private final ExecutorService pool;
    private final ThreadLocal<Worker> workers;
    private final ConcurrentLinkedQueue<AutoCloseable> resources = new ConcurrentLinkedQueue<>();
    private final ImageDecoder hotDecoder;

    /**
     * What a call counted.
     *
     * @param frames frames of the episodes handled
     * @param images camera images decoded and measured
     * @param decodeErrors images that could not be decoded (returned with decode_error)
     * @param blurry images below the blur threshold
     * @param staticImages images below the static threshold
     * @param embedded images embedded
     */
    public record Tally(long frames, long images, long decodeErrors, long blurry, long staticImages, long embedded) {}

    /**
     * The rows of a call.
     *
     * @param frames the frame rows with their enrichment (or, for {@link #embedOnly}, only the frames with a vector)
     * @param episodes the episode rows with their enrichment
     * @param tally what was counted
     */
    public record Output(List<FrameRow> frames, List<EpisodeRow> episodes, Tally tally) {}

    /**
     * @param storage where the raw files of the locators are read
     * @param embedder the image model, or null for no embeddings
     * @param modelId the model's id as the lake registered it (episode vectors are keyed by it); null without an
     *     embedder
     * @param options settings
     */
    public EpisodeEnricher(RawStorage storage, Embedder embedder, String modelId, EnrichOptions options) {
        if (embedder != null && modelId == null) {
            throw new IllegalArgumentException("an embedder needs the model id");
        }
        this.embedder = embedder;
        this.modelId = modelId;
        this.options = options;
        FrameAnalyzer.Options imageOptions = options.image().withKeepRgb(false);
        this.workers = ThreadLocal.withInitial(() -> {
            Worker w = new Worker(new FrameAnalyzer(imageOptions), new LocatorReader(storage));
            resources.add(w);
            return w;
        });
        this.pool = Executors.newFixedThreadPool(options.threads(), r -> {
            Thread t = new Thread(r, "enrich-worker");
            t.setDaemon(true);
            return t;
        });
        this.hotDecoder = new ImageDecoder(); // hot copies for the embedder, on the calling thread
        resources.add(hotDecoder);
    }

    /** Stops the worker threads and frees their decoders and open raw files. */
    @Override
    public void close() {
        pool.shutdownNow();
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                // closing native buffers and file channels of a finished run: nothing left to do on failure
            }
        }
    }

    private static final class Counts {
        long frames;
        long images;
        long decodeErrors;
        long blurry;
        long staticImages;
        long embedded;

        Tally tally() {
            return new Tally(frames, images, decodeErrors, blurry, staticImages, embedded);
        }
    }

    private record Worker(FrameAnalyzer analyzer, LocatorReader reader) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            analyzer.close();
            reader.close();
        }
    }

    /** One image's outcome: an analysis or an error message. */
    private record Cell(FrameAnalysis analysis, String error) {}

    /**
     * Enriches episodes whose image metrics are not done: every image decoded and measured, per-camera motion, the
     * gripper state and phase, and with an embedder the stride's frames embedded.
     *
     * @param batch the episodes
     * @param byEpisode the frames of each episode of {@code batch}, by episode id, in any order (sorted here by
     *     frame index, in place)
     * @param nowNs the enrichment time, nanoseconds since the epoch ({@code enriched_at_ns}, {@code emb_<key>_at_ns})
     * @return the frames and episodes with their enrichment columns set, in the order of {@code batch}
     * @throws IOException when a raw file cannot be read
     */
    public Output enrich(List<EpisodeRow> batch, Map<String, List<FrameRow>> byEpisode, long nowNs)
            throws IOException {
        EnrichOptions o = options;
        Counts counts = new Counts();
        Map<String, Cell[][]> cells = new HashMap<>();
        List<Future<?>> futures = new ArrayList<>();
        for (Map.Entry<String, List<FrameRow>> en : byEpisode.entrySet()) {
            List<FrameRow> frames = en.getValue();
            frames.sort(Comparator.comparingInt(FrameRow::frameIndex));
            Cell[][] c = new Cell[frames.size()][];
            cells.put(en.getKey(), c);
            // video cameras: (frame, image) positions per topic, in frame order, decoded by one task each
            Map<String, List<int[]>> video = new LinkedHashMap<>();
            for (int i = 0; i < frames.size(); i++) {
                List<ImageLocator> ls = frames.get(i).images();
                c[i] = new Cell[ls.size()];
                for (int k = 0; k < ls.size(); k++) {
                    if (isVideo(ls.get(k).format())) {
                        video.computeIfAbsent(ls.get(k).topic(), x -> new ArrayList<>()).add(new int[] {i, k});
                    }
                }
            }
            for (Map.Entry<String, List<int[]>> v : video.entrySet()) {
                futures.add(pool.submit(() -> {
                    analyzeVideo(en.getKey(), v.getKey(), frames, v.getValue(), c, workers.get());
                    return null;
                }));
            }
            for (int s = 0; s < frames.size(); s += SEGMENT) {
                int from = s;
                int to = Math.min(frames.size(), s + SEGMENT);
                futures.add(pool.submit(() -> {
                    Worker w = workers.get();
                    for (int i = from; i < to; i++) {
                        analyze(frames.get(i), w, c[i]);
                    }
                    return null;
                }));
            }
        }
        for (Future<?> f : futures) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("enrich was interrupted", e);
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                if (c instanceof IOException io) {
                    throw io;
                }
                if (c instanceof RuntimeException re) {
                    throw re;
                }
                throw new IOException(c);
            }
        }
        List<FrameRow> outFrames = new ArrayList<>();
        List<EpisodeRow> outEpisodes = new ArrayList<>();
        long now = nowNs;
        for (EpisodeRow ep : batch) {
            List<FrameRow> frames = byEpisode.get(ep.episodeId());
            Episode e = episode(ep, frames, cells.get(ep.episodeId()), embedder, o, counts, hotDecoder);
            outFrames.addAll(e.frames);
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("blur_threshold", o.blurThreshold());
            json.put("blur_ratio", o.blurRatio());
            json.put("static_threshold", o.staticThreshold());
            json.put("stride", o.stride().toString());
            json.put("hot_max_side", o.image().hotMaxSide());
            json.put("hot_quality", o.image().hotQuality());
            json.put("master_camera", e.master);
            json.putAll(e.stats);
            EpisodeRow row = ep.withEnrichment(now, json(json));
            outEpisodes.add(embedder == null ? row : row.withEmbedding(modelId, e.embedding, now));
        }
        counts.frames += outFrames.size();
        return new Output(List.copyOf(outFrames), List.copyOf(outEpisodes), counts.tally());
    }

    /**
     * Embeds a batch of episodes whose image metrics are done, embedded with the model only: the frames the stride selects
     * (from the stored phases and master-camera pHashes, as a full run selects them), their stored hot copies; one
     * lake commit of the model's columns.
     */
    public Output embedOnly(List<EpisodeRow> batch, Map<String, List<FrameRow>> byEpisode, long nowNs) {
        if (embedder == null) {
            throw new IllegalStateException("embedOnly needs an embedder");
        }
        EnrichOptions o = options;
        Counts counts = new Counts();
        List<FrameRow> outFrames = new ArrayList<>();
        List<EpisodeRow> outEpisodes = new ArrayList<>();
        long now = nowNs;
        for (EpisodeRow ep : batch) {
            List<FrameRow> frames = byEpisode.get(ep.episodeId());
            frames.sort(Comparator.comparingInt(FrameRow::frameIndex));
            int n = frames.size();
            String master = masterCamera(ep, frames);
            String[] phase = new String[n];
            Long[] masterHash = new Long[n];
            byte[][][] hot = new byte[n][][];
            for (int i = 0; i < n; i++) {
                FrameRow f = frames.get(i);
                phase[i] = f.phase();
                hot[i] = new byte[f.images().size()][];
                for (int k = 0; k < f.images().size(); k++) {
                    ImageEnrichment e = f.enrichment().isEmpty() ? null : f.enrichment().get(k);
                    if (e == null || e.decodeError() != null) {
                        continue;
                    }
                    hot[i][k] = e.hotJpeg();
                    if (masterHash[i] == null && f.images().get(k).topic().equals(master)) {
                        masterHash[i] = e.phash();
                    }
                }
            }
            boolean[] selected = select(frames, phase, masterHash, o.stride());
            Embedded em = embed(ep.episodeId(), frames, hot, selected, master, embedder, o, hotDecoder);
            counts.embedded += em.count();
            for (int i = 0; i < n; i++) {
                FrameRow f = frames.get(i);
                if (em.vectors()[i] == null) {
                    continue; // not embedded: the model's column stays null for the frame
                }
                List<ImageEnrichment> en = new ArrayList<>(f.enrichment());
                for (int k = 0; k < en.size(); k++) {
                    if (em.vectors()[i][k] != null) {
                        en.set(k, en.get(k).withEmbedding(modelId, em.vectors()[i][k]));
                    }
                }
                outFrames.add(f.withEnrichment(f.images(), en, f.gripperState(), f.phase()));
            }
            outEpisodes.add(ep.withEmbedding(modelId, em.episodeVector(), now));
        }
        counts.frames += byEpisode.values().stream().mapToLong(List::size).sum();
        return new Output(List.copyOf(outFrames), List.copyOf(outEpisodes), counts.tally());
    }

    /** The master camera: the episode's master topic when it is a camera of the frames, else the first camera seen. */
    private static String masterCamera(EpisodeRow ep, List<FrameRow> frames) {
        String master = null;
        for (FrameRow f : frames) {
            for (ImageLocator l : f.images()) {
                if (master == null || l.topic().equals(ep.masterTopic())) {
                    master = l.topic();
                }
            }
        }
        return master;
    }

    /**
     * Which frames the stride embeds: every k-th frame index plus phase changes, or with {@code keyframes} the first
     * frame, phase changes and frames whose master-camera pHash moved more than {@link Stride#KEYFRAME_PHASH_BITS}
     * bits from the last keyframe's.
     *
     * @param phase per frame, its phase label or null
     * @param masterHash per frame, the master camera's pHash or null
     */
    private static boolean[] select(List<FrameRow> frames, String[] phase, Long[] masterHash, Stride stride) {
        int n = frames.size();
        boolean[] selected = new boolean[n];
        long lastKeyHash = 0;
        boolean haveKey = false;
        for (int i = 0; i < n; i++) {
            boolean phaseChange = i > 0 && !java.util.Objects.equals(phase[i], phase[i - 1]);
            if (stride.keyframesOnly()) {
                Long h = masterHash[i];
                boolean moved = h != null && haveKey
                        && PerceptualHash.hammingDistance(h, lastKeyHash) > Stride.KEYFRAME_PHASH_BITS;
                selected[i] = i == 0 || phaseChange || moved || (h != null && !haveKey);
                if (selected[i] && h != null) {
                    lastKeyHash = h;
                    haveKey = true;
                }
            } else {
                selected[i] = frames.get(i).frameIndex() % stride.every() == 0 || phaseChange;
            }
        }
        return selected;
    }

    /**
     * The embeddings of one episode.
     *
     * @param vectors per frame and camera, the image's vector, null where not embedded; a frame's entry is null when
     *     none of its images was
     * @param episodeVector the L2-normalised mean of the master camera's vectors, null when it has none
     * @param count images embedded
     */
    private record Embedded(float[][][] vectors, float[] episodeVector, long count) {}

    /**
     * Embeds the hot copies of the selected frames (all cameras) in batches of {@link EnrichOptions#embedBatch()}.
     *
     * @param hot per frame and camera, the hot JPEG, null where the image could not be decoded
     */
    private static Embedded embed(String episodeId, List<FrameRow> frames, byte[][][] hot, boolean[] selected,
                                  String master, Embedder embedder, EnrichOptions o, ImageDecoder hotDecoder) {
        int n = frames.size();
        float[][][] vectors = new float[n][][];
        List<int[]> at = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            for (int k = 0; selected[i] && k < hot[i].length; k++) {
                if (hot[i][k] != null) {
                    at.add(new int[] {i, k});
                }
            }
        }
        double[] sum = new double[embedder.dimension()];
        int masterCount = 0;
        for (int from = 0; from < at.size(); from += o.embedBatch()) {
            List<int[]> part = at.subList(from, Math.min(at.size(), from + o.embedBatch()));
            List<RgbImage> imgs = new ArrayList<>(part.size());
            for (int[] p : part) {
                try {
                    imgs.add(hotDecoder.decode(hot[p[0]][p[1]], ImageFormat.JPEG, "hot copy of " + episodeId + " frame "
                            + frames.get(p[0]).frameIndex()).rgb());
                } catch (ImageDecodeException e) {
                    throw new IllegalStateException("the hot copy of " + episodeId + " frame "
                            + frames.get(p[0]).frameIndex() + " does not decode: " + e.getMessage(), e);
                }
            }
            float[][] v = embedder.embed(imgs);
            if (v.length != imgs.size()) {
                throw new Embedder.EmbeddingException("model " + embedder.modelId() + " returned " + v.length
                        + " embeddings for " + imgs.size() + " images", null);
            }
            for (int j = 0; j < v.length; j++) {
                int fi = part.get(j)[0];
                int ci = part.get(j)[1];
                if (v[j].length != sum.length) {
                    throw new Embedder.EmbeddingException("model " + embedder.modelId() + " returned a vector of "
                            + v[j].length + " values; its dimension is " + sum.length, null);
                }
                if (vectors[fi] == null) {
                    vectors[fi] = new float[hot[fi].length][];
                }
                vectors[fi][ci] = v[j];
                if (frames.get(fi).images().get(ci).topic().equals(master)) {
                    for (int d = 0; d < sum.length; d++) {
                        sum[d] += v[j][d];
                    }
                    masterCount++;
                }
            }
        }
        return new Embedded(vectors, masterCount > 0 ? normalise(sum) : null, at.size());
    }


    /** Fills {@code out} with the outcome of every image of the frame that is not a video access unit. */
    private static void analyze(FrameRow f, Worker w, Cell[] out) throws IOException {
        for (int k = 0; k < out.length; k++) {
            ImageLocator l = f.images().get(k);
            if (isVideo(l.format())) {
                continue; // decoded in stream order by analyzeVideo
            }
            String where = where(f, l);
            byte[] data;
            try {
                data = w.reader().read(locator(l));
            } catch (MalformedDataException e) {
                out[k] = new Cell(null, where + ": " + e.problem()); // read, but not what the locator says
                continue;
            }
            try {
                ImageFormat fmt = ImageFormat.of(l.format(), l.width() == null ? 0 : l.width(),
                        l.height() == null ? 0 : l.height(), data);
                out[k] = new Cell(w.analyzer().analyze(data, fmt, where), null);
            } catch (ImageDecodeException e) {
                out[k] = new Cell(null, e.getMessage());
            } catch (IllegalArgumentException e) {
                out[k] = new Cell(null, where + ": " + e.getMessage());
            }
        }
    }

    private static String where(FrameRow f, ImageLocator l) {
        return l.rawUri() + (l.plain() ? " bytes " + l.offset() : " chunk at " + l.chunkOffset()
                + " offset " + l.offset()) + " (" + l.topic() + ", episode " + f.episodeId() + " frame "
                + f.frameIndex() + ")";
    }

    private static RawLocator locator(ImageLocator l) {
        return RawLocator.fromStored(l.rawUri(), l.chunkOffset(), l.offset(), l.length(), l.compression(), l.format(),
                l.width(), l.height());
    }

    /** @return true for the format of a foxglove.CompressedVideo access unit: h264, h265 (or avc, hevc) */
    static boolean isVideo(String format) {
        if (format == null) {
            return false;
        }
        String f = format.trim().toLowerCase(java.util.Locale.ROOT);
        return f.equals("h264") || f.equals("h265") || f.equals("avc") || f.equals("hevc");
    }

    /** @return the identity of an access unit: raw file, chunk, offset and length of its locator */
    private static String unitKey(String uri, long chunkOffset, long offset, long length) {
        return uri + "|" + chunkOffset + "|" + offset + "|" + length;
    }

    /**
     * Decodes one video camera of one episode and analyses the pictures its frame rows point at as 8-bit RGB
     * images (the same columns as a JPEG camera).
     *
     * <p>A P-frame needs every picture it references, also those the alignment did not keep as frame rows (a camera
     * faster than the master clock). So every access unit of the topic is listed from the raw files the frame rows
     * point into ({@link VideoUnits}: MCAP and ROS 1 bags through their readers with a topic filter, in log-time
     * order; sidecar MP4 samples in decode order), and one {@link AnnexBDecoder} is fed the units from the last
     * keyframe at or before the first unit a frame row points at up to the last such unit. Each decoded picture
     * goes to the frame rows whose locator is that unit's (same raw file, chunk, offset and length), so a unit two
     * frame rows share is decoded once. Units before the stream's first keyframe get the decode error "before the
     * first keyframe"; a unit whose bytes are malformed ({@link MalformedDataException}) or that the decoder rejects
     * gets that message, and the units after it up to the next keyframe (which reference the lost picture) are not
     * fed to the decoder and get a message naming the damaged unit; decoding resumes at the next keyframe.
     *
     * @param pos (frame, image) positions of the topic's images, in frame order
     */
    private static void analyzeVideo(String episode, String topic, List<FrameRow> frames, List<int[]> pos,
                                     Cell[][] cells, Worker w) throws IOException {
        Map<String, List<int[]>> wanted = new HashMap<>();
        List<String> uris = new ArrayList<>();
        for (int[] ik : pos) {
            ImageLocator l = frames.get(ik[0]).images().get(ik[1]);
            wanted.computeIfAbsent(unitKey(l.rawUri(), l.chunkOffset(), l.offset(), l.length()), x -> new ArrayList<>())
                    .add(ik);
            if (!uris.contains(l.rawUri())) {
                uris.add(l.rawUri());
            }
        }
        String source = episode + " camera " + topic;
        List<VideoUnits.Unit> all = new ArrayList<>();
        List<String> names = new ArrayList<>(); // per unit: "sample 13" (MP4, decode order) or "message 13 of TOPIC"
        try {
            for (String u : uris) {
                java.nio.file.Path file;
                try {
                    file = java.nio.file.Path.of(java.net.URI.create(u));
                } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
                    throw new io.flywheel.ingest.IngestException(u, -1, "only file: URIs can be read here");
                }
                List<VideoUnits.Unit> units = VideoUnits.read(file, topic);
                boolean mp4 = VideoUnits.isMp4(file);
                for (int i = 0; i < units.size(); i++) {
                    names.add(mp4 ? "sample " + i : "message " + i + " of " + topic);
                }
                all.addAll(units);
            }
        } catch (io.flywheel.ingest.IngestException | io.flywheel.mcap.McapFormatException
                 | io.flywheel.ros.bag.BagFormatException e) {
            for (int[] ik : pos) {
                cells[ik[0]][ik[1]] = new Cell(null, source + ": cannot list the access units of the camera: "
                        + e.getMessage());
            }
            return;
        }
        // positions of the wanted units in the stream
        String[] keys = new String[all.size()];
        int first = -1;
        int last = -1;
        for (int u = 0; u < all.size(); u++) {
            RawLocator l = all.get(u).locator();
            keys[u] = unitKey(l.uri(), l.chunkOffset(), l.offset(), l.length());
            if (wanted.containsKey(keys[u])) {
                first = first < 0 ? u : first;
                last = u;
            }
        }
        AnnexBDecoder dec = null;
        try {
            if (first >= 0) {
                // start at the last keyframe at or before the first wanted unit (or at the stream's start)
                int start = 0;
                for (int u = first; u >= 0; u--) {
                    RawLocator l = all.get(u).locator();
                    VideoCodec codec;
                    try {
                        codec = VideoCodec.fromFormat(l.format());
                    } catch (IllegalArgumentException e) {
                        continue;
                    }
                    byte[] data;
                    try {
                        data = w.reader().read(l);
                    } catch (MalformedDataException e) {
                        continue; // damaged: not a keyframe to start from
                    }
                    if (AnnexB.firstNalOffset(data) >= 0 && AnnexB.isKeyframe(codec, data)) {
                        start = u;
                        break;
                    }
                }
                boolean seenKey = false;
                // the unit that was damaged (malformed bytes, or rejected by the decoder) since the last keyframe:
                // the units after it reference lost pictures, so they are skipped until the next keyframe
                String damaged = null;
                for (int u = start; u <= last; u++) {
                    RawLocator l = all.get(u).locator();
                    List<int[]> at = wanted.get(keys[u]);
                    String where = (at == null ? l.uri() + " (" + source + ")"
                            : where(frames.get(at.get(0)[0]), frames.get(at.get(0)[0]).images().get(at.get(0)[1])))
                            + ", " + names.get(u);
                    VideoCodec codec;
                    try {
                        codec = VideoCodec.fromFormat(l.format());
                    } catch (IllegalArgumentException e) {
                        put(cells, at, new Cell(null, where + ": " + e.getMessage()));
                        continue;
                    }
                    if (dec != null && dec.codec() != codec) {
                        put(cells, at, new Cell(null, where + ": format changed from " + dec.codec().format() + " to "
                                + codec.format() + " within the camera"));
                        continue;
                    }
                    byte[] data;
                    try {
                        data = w.reader().read(l);
                    } catch (MalformedDataException e) {
                        // read, but damaged: this image only; the decoder is not fed it
                        put(cells, at, new Cell(null, where + ": " + e.problem()));
                        damaged = names.get(u) + " of " + l.uri() + " (" + e.problem() + ")";
                        continue;
                    }
                    boolean key = AnnexB.firstNalOffset(data) >= 0 && AnnexB.isKeyframe(codec, data);
                    if (!key && (!seenKey || damaged != null)) {
                        put(cells, at, new Cell(null, where + ": " + codec.format() + (damaged != null
                                ? " access unit after the damaged " + damaged + " and before the next keyframe: the"
                                + " pictures it references are lost, so it cannot be decoded (decoding resumes at the"
                                + " next keyframe)"
                                : " access unit before the first keyframe of the episode; it cannot be decoded")));
                        continue;
                    }
                    if (key) {
                        seenKey = true;
                        damaged = null;
                    }
                    if (dec == null) {
                        dec = AnnexBDecoder.open(codec, source);
                    }
                    try {
                        for (VideoFrame vf : dec.decode(data, u)) {
                            analyzeDecoded(vf, keys, wanted, frames, cells, w);
                        }
                    } catch (VideoFormatException e) {
                        put(cells, at, new Cell(null, where + ": " + e.getMessage()));
                        damaged = names.get(u) + " of " + l.uri() + " (the " + codec.format() + " decoder rejected it)";
                    }
                }
                if (dec != null) {
                    for (VideoFrame vf : dec.flush()) {
                        analyzeDecoded(vf, keys, wanted, frames, cells, w);
                    }
                }
            }
        } catch (VideoFormatException e) {
            // the decoder failed while draining (or could not open): the images left without an outcome get it
            for (int[] ik : pos) {
                if (cells[ik[0]][ik[1]] == null) {
                    cells[ik[0]][ik[1]] = new Cell(null, e.getMessage());
                }
            }
        } finally {
            if (dec != null) {
                dec.close();
            }
        }
        java.util.Set<String> listed = new java.util.HashSet<>(java.util.Arrays.asList(keys));
        for (int[] ik : pos) {
            if (cells[ik[0]][ik[1]] != null) {
                continue;
            }
            FrameRow f = frames.get(ik[0]);
            ImageLocator l = f.images().get(ik[1]);
            cells[ik[0]][ik[1]] = new Cell(null, where(f, l) + (listed.contains(unitKey(l.rawUri(), l.chunkOffset(),
                    l.offset(), l.length())) ? ": the " + l.format() + " decoder returned no picture for this access unit"
                    : ": no access unit of " + topic + " among the " + all.size() + " in the raw file lies here (was the"
                    + " file changed after ingest?)"));
        }
    }

    private static void put(Cell[][] cells, List<int[]> at, Cell c) {
        if (at != null) {
            for (int[] ik : at) {
                cells[ik[0]][ik[1]] = c;
            }
        }
    }

    /** Analyses one decoded picture and stores it at the frame rows of the unit its time (the unit's index) names. */
    private static void analyzeDecoded(VideoFrame vf, String[] keys, Map<String, List<int[]>> wanted, List<FrameRow> frames,
                                       Cell[][] cells, Worker w) {
        long u = vf.timestampNs();
        List<int[]> at = u >= 0 && u < keys.length ? wanted.get(keys[(int) u]) : null;
        if (at == null) {
            return; // a picture only decoded as a reference
        }
        if (cells[at.get(0)[0]][at.get(0)[1]] != null) {
            return; // the unit was rejected; a picture the decoder still gives for it is concealment, not the image
        }
        FrameRow f = frames.get(at.get(0)[0]);
        String where = where(f, f.images().get(at.get(0)[1]));
        RgbImage img = vf.image();
        Cell c;
        try {
            c = new Cell(w.analyzer().analyze(img.pixels(), ImageFormat.raw("rgb8", img.width(), img.height()), where),
                    null);
        } catch (ImageDecodeException e) {
            c = new Cell(null, e.getMessage());
        }
        put(cells, at, c);
    }

    private record Episode(List<FrameRow> frames, float[] embedding, String master, Map<String, Object> stats) {}

    /**
     * @return per camera topic of the episode, the sharpness below which its images are blurry: the larger of the
     *     absolute floor and {@code blurRatio} times the median sharpness of the camera's decoded frames
     */
    static Map<String, Double> blurLimits(List<FrameRow> frames, Cell[][] cells, EnrichOptions o) {
        Map<String, List<Double>> byTopic = new HashMap<>();
        for (int i = 0; i < frames.size(); i++) {
            for (int k = 0; k < frames.get(i).images().size(); k++) {
                if (cells[i][k].analysis() != null) {
                    byTopic.computeIfAbsent(frames.get(i).images().get(k).topic(), t -> new ArrayList<>())
                            .add(cells[i][k].analysis().sharpness());
                }
            }
        }
        Map<String, Double> out = new HashMap<>();
        byTopic.forEach((topic, v) -> {
            java.util.Collections.sort(v);
            int n = v.size();
            double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
            out.put(topic, Math.max(o.blurThreshold(), o.blurRatio() * median));
        });
        return out;
    }

    private static Episode episode(EpisodeRow ep, List<FrameRow> frames, Cell[][] cells, Embedder embedder,
                                   EnrichOptions o, Counts counts, ImageDecoder hotDecoder) {
        int n = frames.size();
        long[] times = new long[n];
        Double[] gripper = new Double[n];
        double[][] state = new double[n][];
        for (int i = 0; i < n; i++) {
            times[i] = frames.get(i).timestampNs();
            gripper[i] = frames.get(i).gripper();
            state[i] = frames.get(i).state();
        }
        MotionLabeler.Labels labels = MotionLabeler.label(times, gripper, state, o.motion());
        String master = masterCamera(ep, frames);
        Map<String, Double> blurLimit = blurLimits(frames, cells, o);
        // per camera, in order: difference to the previous frame of that camera
        Map<String, FrameAnalysis> previous = new HashMap<>();
        List<List<ImageEnrichment>> enrich = new ArrayList<>();
        long images = 0;
        long errors = 0;
        long blurry = 0;
        long stat = 0;
        for (int i = 0; i < n; i++) {
            FrameRow f = frames.get(i);
            List<ImageEnrichment> row = new ArrayList<>();
            for (int k = 0; k < f.images().size(); k++) {
                Cell c = cells[i][k];
                String topic = f.images().get(k).topic();
                if (c.analysis() == null) {
                    row.add(ImageEnrichment.failed(c.error()));
                    previous.remove(topic);
                    errors++;
                    continue;
                }
                FrameAnalysis a = c.analysis();
                FrameAnalysis prev = previous.put(topic, a);
                Double mad = prev == null || prev.thumbnail().width() != a.thumbnail().width()
                        || prev.thumbnail().height() != a.thumbnail().height() ? null
                        : ImageMetrics.meanAbsoluteDifference(prev.thumbnail(), a.thumbnail());
                boolean isBlurry = a.sharpness() < blurLimit.get(topic);
                Boolean isStatic = mad == null ? null : mad < o.staticThreshold();
                images++;
                blurry += isBlurry ? 1 : 0;
                stat += Boolean.TRUE.equals(isStatic) ? 1 : 0;
                row.add(new ImageEnrichment(a.sharpness(), isBlurry, mad, isStatic, a.phash(), a.hotJpeg(), null, null));
            }
            enrich.add(row);
        }
        // which frames are embedded
        String[] phase = new String[n];
        Long[] masterHash = new Long[n];
        byte[][][] hot = new byte[n][][];
        for (int i = 0; i < n; i++) {
            phase[i] = labels.phase()[i] == null ? null : labels.phase()[i].label();
            masterHash[i] = hashOf(frames.get(i), cells[i], master);
            hot[i] = new byte[cells[i].length][];
            for (int k = 0; k < cells[i].length; k++) {
                hot[i][k] = cells[i][k].analysis() == null ? null : cells[i][k].analysis().hotJpeg();
            }
        }
        boolean[] selected = select(frames, phase, masterHash, o.stride());
        int keyframes = 0;
        for (boolean b : selected) {
            keyframes += b ? 1 : 0;
        }
        float[] episodeEmbedding = null;
        long embedded = 0;
        if (embedder != null) {
            Embedded em = embed(ep.episodeId(), frames, hot, selected, master, embedder, o, hotDecoder);
            for (int i = 0; i < n; i++) {
                for (int k = 0; em.vectors()[i] != null && k < em.vectors()[i].length; k++) {
                    if (em.vectors()[i][k] != null) {
                        enrich.get(i).set(k, enrich.get(i).get(k).withEmbedding(embedder.modelId(), em.vectors()[i][k]));
                    }
                }
            }
            episodeEmbedding = em.episodeVector();
            embedded = em.count();
        }
        List<FrameRow> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            FrameRow f = frames.get(i);
            List<ImageLocator> locs = new ArrayList<>();
            for (int k = 0; k < f.images().size(); k++) {
                FrameAnalysis a = cells[i][k].analysis();
                locs.add(a == null ? f.images().get(k) : f.images().get(k).withSize(a.width(), a.height()));
            }
            GripperState g = labels.gripper()[i];
            Phase p = labels.phase()[i];
            out.add(f.withEnrichment(locs, enrich.get(i), g == null ? null : g.label(), p == null ? null : p.label()));
        }
        counts.images += images;
        counts.decodeErrors += errors;
        counts.blurry += blurry;
        counts.staticImages += stat;
        counts.embedded += embedded;
        Map<String, Object> stats = new LinkedHashMap<>();
        stats.put("images", images);
        stats.put("decode_errors", errors);
        stats.put("blurry", blurry);
        stats.put("static", stat);
        stats.put("embedded", embedded);
        stats.put("keyframes", keyframes);
        return new Episode(out, episodeEmbedding, master, stats);
    }

    private static Long hashOf(FrameRow f, Cell[] cells, String master) {
        for (int k = 0; k < cells.length; k++) {
            if (f.images().get(k).topic().equals(master) && cells[k].analysis() != null) {
                return cells[k].analysis().phash();
            }
        }
        return null;
    }

    /** @return v / |v| as float32, or null for the zero vector */
    static float[] normalise(double[] v) {
        double s = 0;
        for (double d : v) {
            s += d * d;
        }
        if (s == 0) {
            return null;
        }
        double n = Math.sqrt(s);
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) (v[i] / n);
        }
        return out;
    }

    private static String json(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
