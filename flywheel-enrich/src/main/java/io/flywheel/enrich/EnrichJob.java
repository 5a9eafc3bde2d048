package io.flywheel.enrich;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;


import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.enrich.video.AnnexBDecoder;
import io.flywheel.enrich.motion.MotionLabeler;
import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.MalformedDataException;
import io.flywheel.ingest.VideoUnits;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.EmbeddingModel;
import io.flywheel.lake.VectorIndexInfo;
import io.flywheel.lake.VectorIndexOptions;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;

/**
 * {@code flywheel enrich}: adds the enrichment columns to the {@code frames} and {@code episodes} tables, as new
 * table versions.
 *
 * <p>For every episode whose {@code enriched_at_ns} is null, in batches ({@link EnrichOptions#batchEpisodes()},
 * {@link EnrichOptions#batchFrames()}):
 * <ol>
 *   <li>each camera image of each frame is read through its raw locator ({@link LocatorReader}: the raw file is
 *       never copied), decoded and measured by a pool of worker threads ({@link FrameAnalyzer}: sharpness, pHash,
 *       thumbnail, hot JPEG at training resolution);</li>
 *   <li>per camera, in frame order: the mean absolute thumbnail difference to the previous frame of the same
 *       camera topic, and the blurry and static flags by the thresholds;</li>
 *   <li>per frame: gripper state and phase ({@link MotionLabeler});</li>
 *   <li>with an {@link Embedder}: the hot copies (what a trainer reads) of the frames the {@link Stride} selects,
 *       decoded again (so only the small JPEGs are held in memory), every camera, in batches of {@link EnrichOptions#embedBatch()} on the calling thread; the episode embedding is
 *       the L2-normalised mean of the master camera's embeddings (the profile's master topic when it is a camera
 *       of the frames, else the first camera);</li>
 *   <li>one lake commit for the batch ({@link io.flywheel.lake.LakeTransaction}): a column-scoped update of the
 *       frames' enrichment columns ({@link TableSchemas#FRAME_ENRICHMENT_COLUMNS}) and of the episodes'
 *       ({@link TableSchemas#EPISODE_ENRICHMENT_COLUMNS}, with {@code enriched_at_ns}), and of the model's vector
 *       columns; every other column (quality status, labels, other models' vectors) keeps its bytes. A run killed at
 *       any moment leaves every episode of a batch enriched or not, and the next run redoes the batches not
 *       committed.</li>
 * </ol>
 * Embeddings are stored per model ({@link io.flywheel.lake.EmbeddingModels}): the first run of a model registers it,
 * adding its columns ({@code episodes.emb_<key>} fixed_size_list&lt;float32, D&gt; and {@code emb_<key>_at_ns},
 * {@code frames.emb_<key>} list&lt;fixed_size_list&lt;float32, D&gt;&gt;). An episode whose image metrics are done
 * ({@code enriched_at_ns}) but that the model has not embedded ({@code emb_<key>_at_ns} null: the lake was enriched
 * with another model, or without one) is embedded only: the stride's frames are chosen from the stored phases and
 * master-camera pHashes, their stored hot copies are embedded, and only the model's columns are written (the image
 * metrics are not recomputed, other models' columns keep their bytes). After the batches, the model's vector index on
 * {@code episodes.emb_<key>} is built or refreshed ({@link Lake#refreshVectorIndex}: IVF-PQ from 50,000 episode
 * vectors, flat below).
 * A video camera (locator format {@code h264} / {@code h265}: one access unit of a {@code foxglove.CompressedVideo}
 * message in an MCAP file or ROS 1 bag, or one sample of a sidecar MP4, per image) cannot be decoded image by image:
 * per episode, every access unit of the topic is listed from the raw files ({@link VideoUnits}, also the units the
 * alignment skipped, which later P-frames reference), fed in stream order from the keyframe before the first frame
 * row's unit to one {@link AnnexBDecoder} (ITU-T H.264 / H.265 Annex B, FFmpeg), by one worker task per camera,
 * and each frame row gets the decoded picture of the unit its locator points at, with the same columns as a JPEG
 * image (sharpness, pHash, hot JPEG, embedding); images before the first keyframe get the decode error "before the
 * first keyframe". A unit whose bytes were read but are damaged (an MP4 sample whose NAL lengths do not add up,
 * {@link MalformedDataException}; a unit the decoder rejects) gets a decode error naming the raw file, the sample
 * or message and what was expected; the units after it up to the next keyframe reference lost pictures and get a
 * decode error naming the damaged unit; decoding resumes at the next keyframe and the episode is enriched.
 * An image that cannot be decoded (also one whose bytes were read but are malformed: an invalid base64 payload, a
 * damaged video sample) gets only a {@code decode_error} (the message names the raw file, the locator and what was
 * expected) and is counted in {@link Result#decodeErrors()}; a raw file that cannot be read (missing, a range past
 * its end, a chunk that does not decompress) stops the run with the file and offset in the message, leaving earlier
 * batches committed.
 * Memory is bounded by one batch of hot copies and thumbnails.
 */
public final class EnrichJob {

    private EnrichJob() {}

    /**
     * Progress after each batch.
     *
     * @param framesDone frames enriched so far in this run
     * @param framesTotal frames of the episodes pending at the start
     * @param episodesDone episodes enriched so far
     * @param episodesTotal episodes pending at the start
     * @param framesPerSecond frames per second of wall time so far
     * @param eta estimated time left at that rate
     */
    public record Progress(long framesDone, long framesTotal, long episodesDone, long episodesTotal,
                           double framesPerSecond, Duration eta) {
        /** @return e.g. {@code 120/250 frames (48%), 12/25 episodes, 310 frames/s, ETA 0:04} */
        public String line() {
            long s = eta.toSeconds();
            return String.format("%d/%d frames (%d%%), %d/%d episodes, %.0f frames/s, ETA %d:%02d", framesDone,
                    framesTotal, framesTotal == 0 ? 100 : framesDone * 100 / framesTotal, episodesDone, episodesTotal,
                    framesPerSecond, s / 60, s % 60);
        }
    }

    /**
     * What a run did.
     *
     * @param episodesPending episodes not yet enriched at the start
     * @param episodesAlreadyEnriched episodes skipped because an earlier run enriched them
     * @param episodesEnriched episodes committed by this run
     * @param frames frames committed
     * @param images camera images decoded and measured
     * @param decodeErrors images that could not be decoded (kept with decode_error)
     * @param blurry images below the blur threshold
     * @param staticImages images below the static threshold
     * @param embedded images embedded
     * @param batches batches committed
     * @param stoppedEarly true when {@link EnrichOptions#stopAfterBatches()} ended the run with episodes left
     * @param seconds wall time
     * @param embeddingModel model id, null without an embedder
     * @param commits one commit per batch
     * @param episodesEmbeddedOnly of {@code episodesEnriched}, the episodes whose image metrics were done already and
     *     that were only embedded with the model
     * @param model the model as registered in the lake (its columns), null without an embedder
     * @param vectorIndex the model's vector index after the run, null without one (flat search below 50,000 episode
     *     vectors, or without an embedder, or when the run stopped early)
     */
    public record Result(long episodesPending, long episodesAlreadyEnriched, long episodesEnriched, long frames,
                         long images, long decodeErrors, long blurry, long staticImages, long embedded, int batches,
                         boolean stoppedEarly, double seconds, String embeddingModel, List<CommitResult> commits,
                         long episodesEmbeddedOnly, EmbeddingModel model, VectorIndexInfo vectorIndex) {}

    /**
     * Runs the enrichment.
     *
     * @param lake the lake
     * @param embedder the image model, or null for no embeddings
     * @param options settings
     * @param progress called after each batch
     * @return what was committed
     * @throws IOException when a raw file cannot be read (earlier batches stay committed)
     */
    public static Result run(Lake lake, Embedder embedder, EnrichOptions options, Consumer<Progress> progress)
            throws IOException {
        long start = System.nanoTime();
        EmbeddingModel model = embedder == null ? null
                : lake.registerModel(embedder.modelId(), embedder.dimension(), embedder.sha256());
        Pending work = pending(lake, model);
        List<EpisodeRow> full = work.full();
        List<EpisodeRow> embedOnly = work.embedOnly();
        long total = work.total();
        List<EpisodeRow> pending = new ArrayList<>(full);
        pending.addAll(embedOnly);
        long already = total - pending.size();
        long framesTotal = pending.stream().mapToLong(e -> e.frameCount() == null ? 0 : e.frameCount()).sum();
        List<List<EpisodeRow>> batches = new ArrayList<>(batches(full, options));
        int fullBatches = batches.size();
        batches.addAll(batches(embedOnly, options));
        Counts counts = new Counts();
        List<CommitResult> commits = new ArrayList<>();
        long episodesDone = 0;
        long embeddedOnly = 0;
        int done = 0;
        boolean stopped = false;
        EpisodeEnricher enricher = new EpisodeEnricher(lake.rawStorage(), embedder, model == null ? null : model.id(),
                options);
        try {
            for (List<EpisodeRow> batch : batches) {
                if (options.stopAfterBatches() > 0 && done >= options.stopAfterBatches()) {
                    stopped = true;
                    break;
                }
                boolean onlyEmbed = done >= fullBatches;
                commits.add(onlyEmbed ? embedBatch(lake, batch, model, enricher, counts)
                        : batch(lake, batch, model, enricher, counts));
                embeddedOnly += onlyEmbed ? batch.size() : 0;
                done++;
                episodesDone += batch.size();
                double secs = (System.nanoTime() - start) / 1e9;
                double rate = counts.frames / Math.max(secs, 1e-9);
                long left = framesTotal - counts.frames;
                progress.accept(new Progress(counts.frames, framesTotal, episodesDone, pending.size(), rate,
                        Duration.ofSeconds(rate > 0 ? (long) Math.ceil(left / rate) : 0)));
            }
        } finally {
            enricher.close();
        }
        VectorIndexInfo index = model == null || stopped ? null
                : lake.refreshVectorIndex(model, VectorIndexOptions.builder().build()).orElse(null);
        return new Result(pending.size(), already, episodesDone, counts.frames, counts.images, counts.decodeErrors,
                counts.blurry, counts.staticImages, counts.embedded, done, stopped,
                (System.nanoTime() - start) / 1e9, embedder == null ? null : embedder.modelId(), List.copyOf(commits),
                embeddedOnly, model, index);
    }

    /**
     * The episodes a run enriches, each list by episode id.
     *
     * @param full episodes whose image metrics are not done ({@code enriched_at_ns} null)
     * @param embedOnly episodes whose image metrics are done but that the model has not embedded
     * @param total episodes in the lake
     */
    public record Pending(List<EpisodeRow> full, List<EpisodeRow> embedOnly, long total) {
        /** @return full then embed-only episodes */
        public List<EpisodeRow> all() {
            List<EpisodeRow> all = new ArrayList<>(full);
            all.addAll(embedOnly);
            return all;
        }
    }

    /**
     * The selection of {@link #run}: episodes not enriched, and with a model, those it has not embedded.
     *
     * @param lake the lake
     * @param model the registered model, null without an embedder
     * @return the pending episodes
     */
    public static Pending pending(Lake lake, EmbeddingModel model) {
        List<EpisodeRow> full = new ArrayList<>();
        List<EpisodeRow> embedOnly = new ArrayList<>();
        long total;
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            String filter = model == null ? "enriched_at_ns IS NULL"
                    : "enriched_at_ns IS NULL OR " + model.embeddedAtColumn() + " IS NULL";
            for (EpisodeRow e : t.episodes(ScanRequest.builder().filter(filter).build())) {
                (e.enrichedAtNs() == null ? full : embedOnly).add(e);
            }
            total = t.countRows();
        }
        full.sort(Comparator.comparing(EpisodeRow::episodeId));
        embedOnly.sort(Comparator.comparing(EpisodeRow::episodeId));
        return new Pending(List.copyOf(full), List.copyOf(embedOnly), total);
    }

    /**
     * The frames rows of the episodes, by episode id (in the order of {@code episodes}; an episode without frames
     * gets an empty list).
     */
    public static Map<String, List<FrameRow>> frames(Lake lake, List<EpisodeRow> episodes) {
        Map<String, List<FrameRow>> byEpisode = new LinkedHashMap<>();
        for (EpisodeRow e : episodes) {
            byEpisode.put(e.episodeId(), new ArrayList<>());
        }
        if (!episodes.isEmpty()) {
            readFrames(lake, episodes, byEpisode);
        }
        return byEpisode;
    }

    /** Splits episodes into batches of at most {@code batchEpisodes} episodes and {@code batchFrames} frames. */
    private static List<List<EpisodeRow>> batches(List<EpisodeRow> episodes, EnrichOptions options) {
        List<List<EpisodeRow>> batches = new ArrayList<>();
        List<EpisodeRow> cur = new ArrayList<>();
        long curFrames = 0;
        for (EpisodeRow e : episodes) {
            long f = e.frameCount() == null ? 0 : e.frameCount();
            if (!cur.isEmpty() && (cur.size() >= options.batchEpisodes() || curFrames + f > options.batchFrames())) {
                batches.add(cur);
                cur = new ArrayList<>();
                curFrames = 0;
            }
            cur.add(e);
            curFrames += f;
        }
        if (!cur.isEmpty()) {
            batches.add(cur);
        }
        return batches;
    }

    private static final class Counts {
        long frames;
        long images;
        long decodeErrors;
        long blurry;
        long staticImages;
        long embedded;

        void add(EpisodeEnricher.Tally t) {
            frames += t.frames();
            images += t.images();
            decodeErrors += t.decodeErrors();
            blurry += t.blurry();
            staticImages += t.staticImages();
            embedded += t.embedded();
        }
    }

    /** Enriches a batch of episodes whose image metrics are not done, in one commit. */
    private static CommitResult batch(Lake lake, List<EpisodeRow> batch, EmbeddingModel model,
                                      EpisodeEnricher enricher, Counts counts)
            throws IOException {
        Map<String, List<FrameRow>> byEpisode = new LinkedHashMap<>();
        for (EpisodeRow e : batch) {
            byEpisode.put(e.episodeId(), new ArrayList<>());
        }
        readFrames(lake, batch, byEpisode);
        EpisodeEnricher.Output out = enricher.enrich(batch, byEpisode, System.currentTimeMillis() * 1_000_000L);
        counts.add(out.tally());
        return commit(lake, model, out);
    }

    /**
     * The commit of {@link EpisodeEnricher#enrich} rows: a column-scoped update of the frames' and episodes'
     * enrichment columns and, with a model, of its vector columns.
     *
     * @param lake the lake
     * @param model the registered model, null without an embedder
     * @param out the rows
     * @return the commit
     */
    public static CommitResult commit(Lake lake, EmbeddingModel model, EpisodeEnricher.Output out) {
        List<String> frameColumns = new ArrayList<>(TableSchemas.FRAME_ENRICHMENT_COLUMNS);
        List<String> episodeColumns = new ArrayList<>(TableSchemas.EPISODE_ENRICHMENT_COLUMNS);
        if (model != null) {
            frameColumns.add(model.column());
            episodeColumns.addAll(TableSchemas.episodeModelColumns(model));
        }
        var tx = lake.begin("enrich").summary("episodes", Integer.toString(out.episodes().size()));
        if (!out.frames().isEmpty()) {
            tx.updateFrames(frameColumns, out.frames());
        }
        return tx.updateEpisodes(episodeColumns, out.episodes()).commit();
    }

    /** Reads the frames of the batch's episodes, by episode. */
    private static void readFrames(Lake lake, List<EpisodeRow> batch, Map<String, List<FrameRow>> byEpisode) {
        try (LakeTable t = lake.table(TableSchemas.FRAMES)) {
            List<String> quoted = batch.stream().map(e -> "'" + e.episodeId().replace("'", "''") + "'").toList();
            for (FrameRow f : t.frames(ScanRequest.builder().filter("episode_id IN (" + String.join(", ", quoted) + ")")
                    .build())) {
                byEpisode.get(f.episodeId()).add(f);
            }
        }
    }

    /**
     * A batch of episodes whose image metrics are done, embedded with the model only ({@link
     * EpisodeEnricher#embedOnly}); one commit of the model's columns.
     */
    private static CommitResult embedBatch(Lake lake, List<EpisodeRow> batch, EmbeddingModel model,
                                           EpisodeEnricher enricher, Counts counts) {
        Map<String, List<FrameRow>> byEpisode = new LinkedHashMap<>();
        for (EpisodeRow e : batch) {
            byEpisode.put(e.episodeId(), new ArrayList<>());
        }
        readFrames(lake, batch, byEpisode);
        EpisodeEnricher.Output out = enricher.embedOnly(batch, byEpisode, System.currentTimeMillis() * 1_000_000L);
        counts.add(out.tally());
        var tx = lake.begin("enrich").summary("episodes", Integer.toString(out.episodes().size()))
                .summary("model", model.id());
        if (!out.frames().isEmpty()) {
            tx.updateFrames(List.of(model.column()), out.frames());
        }
        return tx.updateEpisodes(TableSchemas.episodeModelColumns(model), out.episodes()).commit();
    }
}
