package io.flywheel.rows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The rows one recording becomes: committed together, all or nothing.
 *
 * @param recordingId the recording's id (shared by its files)
 * @param rawFiles one row per raw file of the recording
 * @param episodes one row per episode
 * @param frames every episode's frames
 */
public record RecordingRows(String recordingId, List<RawFileRow> rawFiles, List<EpisodeRow> episodes,
                            List<FrameRow> frames) {
    public RecordingRows {
        rawFiles = List.copyOf(rawFiles);
        episodes = List.copyOf(episodes);
        frames = List.copyOf(frames);
    }

    /**
     * The same rows with raw files at other URIs: where {@code raw_files.uri}, an image locator's {@code rawUri} or a
     * quoted URI in an episode's metadata JSON ({@code source_files}) is a key of {@code moved}, its value instead.
     * For a file read from one place and kept in another (the gateway reads an upload from its local spool and keeps
     * it in the lake's raw layer on S3).
     *
     * @param moved old URI to new URI
     * @return the rows with the new URIs
     */
    public RecordingRows withRawUris(Map<String, String> moved) {
        List<RawFileRow> raw = new ArrayList<>();
        for (RawFileRow r : rawFiles) {
            String to = moved.get(r.uri());
            raw.add(to == null ? r : new RawFileRow(to, r.bytes(), r.sha256(), r.format(), r.recordingId(),
                    r.robotId(), r.recordedAtNs(), r.topicsJson(), r.ingestStatus(), r.ingestedAtNs()));
        }
        List<EpisodeRow> eps = new ArrayList<>();
        for (EpisodeRow e : episodes) {
            String json = e.metadataJson();
            if (json != null) {
                for (Map.Entry<String, String> m : moved.entrySet()) {
                    json = json.replace('"' + m.getKey() + '"', '"' + m.getValue() + '"');
                }
            }
            eps.add(json == null || json.equals(e.metadataJson()) ? e : e.withMetadataJson(json));
        }
        List<FrameRow> fr = new ArrayList<>(frames.size());
        for (FrameRow f : frames) {
            List<ImageLocator> images = new ArrayList<>(f.images().size());
            boolean changed = false;
            for (ImageLocator l : f.images()) {
                String to = moved.get(l.rawUri());
                changed |= to != null;
                images.add(to == null ? l : new ImageLocator(l.topic(), to, l.chunkOffset(), l.offset(), l.length(),
                        l.compression(), l.residualNs(), l.format(), l.width(), l.height()));
            }
            fr.add(changed ? f.withEnrichment(images, f.enrichment(), f.gripperState(), f.phase()) : f);
        }
        return new RecordingRows(recordingId, raw, eps, fr);
    }
}
