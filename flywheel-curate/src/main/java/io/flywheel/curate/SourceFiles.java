package io.flywheel.curate;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The raw files an episode came from, as ingest records them: {@code episodes.metadata} is a JSON object whose
 * {@code source_files} is the list of the recording's file URIs ({@code file:/...} or a plain path), in recording
 * order (several for a split rosbag2 recording). Read here, in one place, for the stages that go back to the raw
 * files (the alignment timeline, the console) or name them (the quality report).
 */
public final class SourceFiles {
    /** The key of the list in {@code episodes.metadata}. */
    public static final String KEY = "source_files";

    private static final ObjectMapper JSON = new ObjectMapper();

    private SourceFiles() {}

    /**
     * @param metadataJson an {@code episodes.metadata} value, or null
     * @return its {@code source_files} URIs in order; empty when the metadata is null, not JSON or has no such list
     */
    public static List<String> uris(String metadataJson) {
        if (metadataJson == null || metadataJson.isEmpty()) {
            return List.of();
        }
        JsonNode files;
        try {
            files = JSON.readTree(metadataJson).path(KEY);
        } catch (IOException e) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (JsonNode f : files) {
            out.add(f.asText());
        }
        return out;
    }

    /**
     * @param metadataJson an {@code episodes.metadata} value, or null
     * @return the file names (no folder) of its {@code source_files}, in order; empty as {@link #uris}
     */
    public static List<String> names(String metadataJson) {
        List<String> out = new ArrayList<>();
        for (String u : uris(metadataJson)) {
            String path = u.startsWith("file:") ? java.net.URI.create(u).getPath() : u;
            out.add(path.substring(path.lastIndexOf('/') + 1));
        }
        return out;
    }

    /**
     * @param uri a {@code source_files} entry
     * @return its local path: the path of a {@code file:} URI, else the entry itself
     */
    public static java.nio.file.Path localPath(String uri) {
        return java.nio.file.Path.of(uri.startsWith("file:") ? java.net.URI.create(uri).getPath() : uri);
    }
}
