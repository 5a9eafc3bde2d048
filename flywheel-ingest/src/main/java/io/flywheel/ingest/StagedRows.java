package io.flywheel.ingest;

import java.io.IOException;
import java.io.UncheckedIOException;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.RecordingRows;

/**
 * The ingest rows as one JSON document each, the way they cross from a job that ran elsewhere (a Spark task) to the
 * process that commits them into the lake. Each document holds every component of the row record by name (values
 * exactly: a double is written as the shortest decimal that reads back as the same double, NaN as the string
 * {@code "NaN"}), so {@code decode(encode(row))} equals {@code row}. The two sides must run the same Flywheel build:
 * a document with a component the reader's record lacks is refused.
 */
public final class StagedRows {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private StagedRows() {}

    /** @return the row as one JSON object */
    public static String encode(RawFileRow row) {
        return write(row);
    }

    /** @return the row as one JSON object */
    public static String encode(EpisodeRow row) {
        return write(row);
    }

    /** @return the row as one JSON object */
    public static String encode(FrameRow row) {
        return write(row);
    }

    /**
     * @param json a document of {@link #encode(RawFileRow)}
     * @return the row
     * @throws io.flywheel.error.BadInputException when the document is not a raw_files row of this build (the message says where)
     */
    public static RawFileRow rawFile(String json) {
        return read(json, RawFileRow.class);
    }

    /**
     * @param json a document of {@link #encode(EpisodeRow)}
     * @return the row
     * @throws io.flywheel.error.BadInputException when the document is not an episodes row of this build
     */
    public static EpisodeRow episode(String json) {
        return read(json, EpisodeRow.class);
    }

    /**
     * @param json a document of {@link #encode(FrameRow)}
     * @return the row
     * @throws io.flywheel.error.BadInputException when the document is not a frames row of this build
     */
    public static FrameRow frame(String json) {
        return read(json, FrameRow.class);
    }

    /**
     * Groups staged rows back into recordings.
     *
     * @param rawFiles {@code {recording_id, row}} per raw file
     * @param episodes {@code {recording_id, row}} per episode
     * @param frames {@code {recording_id, row}} per frame
     * @return one entry per recording, in the order of their first raw file (then of their first episode, frame);
     *     each recording's rows in the order given
     * @throws io.flywheel.error.BadInputException when a row is not a document of this build
     */
    public static java.util.List<RecordingRows> assemble(java.util.List<Object[]> rawFiles,
                                                         java.util.List<Object[]> episodes,
                                                         java.util.List<Object[]> frames) {
        java.util.Map<String, java.util.List<RawFileRow>> raw = new java.util.LinkedHashMap<>();
        java.util.Map<String, java.util.List<EpisodeRow>> eps = new java.util.LinkedHashMap<>();
        java.util.Map<String, java.util.List<FrameRow>> frs = new java.util.LinkedHashMap<>();
        for (Object[] r : rawFiles) {
            raw.computeIfAbsent((String) r[0], k -> new java.util.ArrayList<>()).add(rawFile((String) r[1]));
        }
        for (Object[] r : episodes) {
            raw.computeIfAbsent((String) r[0], k -> new java.util.ArrayList<>());
            eps.computeIfAbsent((String) r[0], k -> new java.util.ArrayList<>()).add(episode((String) r[1]));
        }
        for (Object[] r : frames) {
            raw.computeIfAbsent((String) r[0], k -> new java.util.ArrayList<>());
            frs.computeIfAbsent((String) r[0], k -> new java.util.ArrayList<>()).add(frame((String) r[1]));
        }
        java.util.List<RecordingRows> out = new java.util.ArrayList<>();
        for (java.util.Map.Entry<String, java.util.List<RawFileRow>> e : raw.entrySet()) {
            out.add(new RecordingRows(e.getKey(), e.getValue(), eps.getOrDefault(e.getKey(), java.util.List.of()),
                    frs.getOrDefault(e.getKey(), java.util.List.of())));
        }
        return out;
    }

    private static String write(Object row) {
        try {
            return JSON.writeValueAsString(row);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static <T> T read(String json, Class<T> type) {
        try {
            return JSON.readValue(json, type);
        } catch (IOException e) {
            String head = json == null ? "null" : json.length() > 120 ? json.substring(0, 120) + "..." : json;
            throw new io.flywheel.error.BadInputException("staged " + type.getSimpleName() + " row: " + (e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage()) + " in "
                    + head, e);
        }
    }
}
