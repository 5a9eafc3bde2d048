package io.flywheel.fleet.upload;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.StreamLabelLinks;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * Ingests landed files into the lake, one at a time, in the order they landed, on its own thread: uploads go on at
 * the network's and the disk's rate while ingest runs at its own. Each file is ingested as
 * {@code flywheel ingest --robot ROBOT FILE} would ({@link IngestJob#run}: one lake transaction per recording,
 * idempotent by content hash, sidecar videos beside it included).
 */
public final class IngestQueue implements AutoCloseable {
    /**
     * What ingest wrote for one file.
     *
     * @param recordingId the lake's recording id ({@code rec-...})
     * @param episodes episode rows written (0 when the lake had the recording already)
     * @param frames frame rows written
     * @param rawUri the file's {@code raw_files.uri}
     */
    public record Outcome(String recordingId, int episodes, long frames, String rawUri) {}

    /** Told of each file's progress, on the queue's thread. */
    public interface Listener {
        /** Ingest of {@code u} starts. */
        void ingesting(StagedUpload u);

        /** {@code u}'s rows are committed (or were in the lake already). */
        void ingested(StagedUpload u, Outcome outcome);

        /**
         * Ingest of {@code u} failed; {@code message} says why.
         *
         * @param rejected true when ingest refused the file's content (not a recording it can read: the same file
         *     fails every time); false when the lake or the disk failed (the file may be fine: worth another try)
         */
        void failed(StagedUpload u, String message, boolean rejected);
    }

    private final Lake lake;
    private final Staging staging;
    private final IngestSettings settings;
    private final Listener listener;
    private final S3RawMirror mirror;
    private final LinkedBlockingQueue<StagedUpload> queue = new LinkedBlockingQueue<>();
    private final Thread worker;
    private final AtomicLong ingested = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private volatile boolean stopping;
    private volatile StagedUpload current;

    /**
     * Starts the queue's thread.
     *
     * @param lake the lake ingest commits to
     * @param staging where landed files are
     * @param settings ingest options
     * @param listener told of each file
     * @param mirror for a lake on S3: the files are read from the local staging but kept in the bucket, so the rows
     *     name them by their {@code s3://} URIs; null for a local lake
     */
    public IngestQueue(Lake lake, Staging staging, IngestSettings settings, Listener listener, S3RawMirror mirror) {
        this.lake = lake;
        this.mirror = mirror;
        this.staging = staging;
        this.settings = settings;
        this.listener = listener;
        this.worker = new Thread(this::loop, "flywheel-ingest-queue");
        worker.setDaemon(true);
        worker.start();
    }

    /** Queues a landed file (not a sidecar: it is ingested with its recording). */
    public void submit(StagedUpload u) {
        queue.add(u);
    }

    /** @return files waiting, not counting the one being ingested */
    public int waiting() {
        return queue.size();
    }

    /** @return the upload being ingested, if any */
    public Optional<StagedUpload> current() {
        return Optional.ofNullable(current);
    }

    /** @return files ingested since start */
    public long ingestedCount() {
        return ingested.get();
    }

    /** @return files ingest could not read since start */
    public long failedCount() {
        return failed.get();
    }

    private void loop() {
        while (!stopping) {
            StagedUpload u;
            try {
                u = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (u == null) {
                continue;
            }
            current = u;
            try {
                ingest(u);
            } finally {
                current = null;
            }
        }
    }

    private void ingest(StagedUpload u) {
        listener.ingesting(u);
        Path file = staging.landedFile(u);
        try {
            IngestJob.Result r = IngestJob.run(sink(), List.of(file), settings.optionsFor(u.robotId()), settings.align(),
                    settings.rules(), line -> { });
            if (!r.failed().isEmpty()) {
                failed.incrementAndGet();
                listener.failed(u, r.failed().get(0).message(), true);
                return;
            }
            IngestJob.RecordingResult rr = r.recordings().get(0);
            String uri = lake.rawFile(u.sha256()).map(RawFileRow::uri).orElse(file.toUri().toString());
            ingested.incrementAndGet();
            listener.ingested(u, new Outcome(rr.recordingId(), rr.episodes(), rr.frames(), uri));
            applyStreamLabels();
        } catch (Exception e) { // a storage or lake failure: the file stays landed, the state says why
            failed.incrementAndGet();
            listener.failed(u, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(), false);
        }
    }

    /**
     * Gives the episodes just ingested the stream labels that arrived before them ({@link StreamLabelLinks}; nothing
     * to do, and no commit, without labels). The labels stay in label_history whatever happens here: a failure leaves
     * them for the next apply (after the labeller's next batch or the next ingest), so it does not fail the ingest.
     */
    private void applyStreamLabels() {
        try {
            StreamLabelLinks.apply(lake);
        } catch (RuntimeException e) {
            System.err.println("flywheel gateway: stream labels not applied after an ingest (kept in label_history,"
                    + " applied by the next run): " + e.getMessage());
        }
    }

    /**
     * @return the lake, or for a lake on S3 the lake with every raw file under the local {@code raw/} folder renamed
     *     to its object under the bucket's {@code raw/} (a recording and its sidecar videos)
     */
    private RowSink sink() {
        if (mirror == null) {
            return lake;
        }
        String local = staging.lakeRoot().resolve(Staging.RAW).toUri().toString();
        String remote = mirror.uriOf(Staging.RAW + "/");
        return new RowSink() {
            @Override
            public java.util.Set<String> committedRawFiles() {
                return lake.committedRawFiles();
            }

            @Override
            public java.util.OptionalLong commit(RecordingRows rows) {
                java.util.Map<String, String> moved = new java.util.HashMap<>();
                for (RawFileRow f : rows.rawFiles()) {
                    if (f.uri().startsWith(local)) {
                        moved.put(f.uri(), remote + f.uri().substring(local.length()));
                    }
                }
                return lake.commit(rows.withRawUris(moved));
            }
        };
    }

    /**
     * Stops after the file being ingested (its transaction is not cut short); files still waiting stay landed, with
     * their state files, and a gateway started later on the lake queues them again.
     */
    @Override
    public void close() {
        stopping = true;
        try {
            worker.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
