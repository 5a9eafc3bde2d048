package io.flywheel.curate.pool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;

import io.flywheel.curate.JsonFiles;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.error.BadInputException;

/**
 * The mined-neighbours file: what {@code flywheel mine --out} writes ({@link #write}) and
 * {@code flywheel trainset build --mined} reads ({@link #read}). A JSON object:
 *
 * <pre>
 * {"neighbours": [{"episode_id": "ep_00042", "query_episode_id": "ep_00007", "distance": 0.0123, "rank": 1}, ...],
 *  "lineage": {"embedding_model": "...", "k": 8, ...}}
 * </pre>
 *
 * <ul>
 *   <li>{@code neighbours}: in rank order per query; {@code episode_id} and {@code query_episode_id} text,
 *       {@code distance} a number (cosine distance, in the whitened space when the lineage says so), {@code rank} an
 *       integer &ge; 1 (1-based among the query's neighbours);</li>
 *   <li>{@code lineage}: an object, what produced the neighbours (copied into the training set's lineage);
 *       optional.</li>
 * </ul>
 * The reader also takes a bare list of neighbours, and ignores other keys of the object (so {@code mine --json}'s
 * output, which adds counts and settings, reads as well).
 */
public final class MinedNeighboursFile {
    /** The key of the neighbours list. */
    public static final String NEIGHBOURS = "neighbours";
    /** The key of the lineage object. */
    public static final String LINEAGE = "lineage";
    /** What the file is, for messages. */
    public static final String EXPECTED = "the neighbours file `flywheel mine --out` writes";

    private static final List<String> FIELDS = List.of("episode_id", "query_episode_id", "distance", "rank");
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .registerModule(new SimpleModule("paths").addSerializer(Path.class, ToStringSerializer.instance))
            .enable(SerializationFeature.INDENT_OUTPUT);

    private MinedNeighboursFile() {}

    /**
     * A file's contents.
     *
     * @param neighbours the neighbours, in file order
     * @param lineage what produced them (JSON values: strings, numbers, booleans, lists, maps); empty when none
     */
    public record Contents(List<MinedEpisode> neighbours, Map<String, Object> lineage) {
        public Contents {
            neighbours = List.copyOf(neighbours);
            lineage = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(lineage));
        }

        /** @return the file's JSON object: {@code neighbours} (one map per neighbour), then {@code lineage} */
        public Map<String, Object> toJson() {
            List<Map<String, Object>> list = new ArrayList<>();
            for (MinedEpisode m : neighbours) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("episode_id", m.episodeId());
                x.put("query_episode_id", m.queryEpisodeId());
                x.put("distance", m.distance());
                x.put("rank", m.rank());
                list.add(x);
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put(NEIGHBOURS, list);
            out.put(LINEAGE, lineage);
            return out;
        }
    }

    /**
     * Writes the file (indented JSON, UTF-8), creating its folder: to a temporary file next to it, then moved into
     * place, so a reader never sees half a file.
     *
     * @throws BadInputException when {@code file} is a folder
     * @throws IOException when the folder or file cannot be written
     */
    public static void write(Path file, Contents contents) throws IOException {
        Path abs = file.toAbsolutePath();
        if (Files.isDirectory(abs)) {
            throw new BadInputException(file + " is a folder; expected the path of the neighbours file to write");
        }
        if (abs.getParent() != null) {
            Files.createDirectories(abs.getParent());
        }
        Path tmp = abs.resolveSibling("." + abs.getFileName() + ".tmp");
        Files.writeString(tmp, MAPPER.writeValueAsString(contents.toJson()));
        try {
            Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (java.nio.file.AtomicMoveNotSupportedException e) {
            Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Reads and checks a neighbours file.
     *
     * @return its neighbours and lineage
     * @throws NoSuchFileException when it does not exist
     * @throws IOException when it cannot be read
     * @throws BadInputException naming the file, and the line and column, when it is a folder, not JSON, not an object
     *     with a {@code neighbours} list (or a list), or a neighbour lacks a field or has one of the wrong type (the
     *     neighbour's 0-based position, the field and what was expected)
     */
    public static Contents read(Path file) throws IOException {
        if (Files.isDirectory(file)) {
            throw new BadInputException(file + " is a folder; expected " + EXPECTED);
        }
        byte[] bytes = Files.readAllBytes(file);
        try (JsonParser p = MAPPER.createParser(bytes)) {
            JsonToken t = p.nextToken();
            List<MinedEpisode> neighbours = null;
            Map<String, Object> lineage = new LinkedHashMap<>();
            if (t == JsonToken.START_ARRAY) {
                neighbours = neighbours(file, p);
            } else if (t == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String key = p.currentName();
                    JsonToken v = p.nextToken();
                    if (NEIGHBOURS.equals(key)) {
                        if (v != JsonToken.START_ARRAY) {
                            throw bad(file, p.currentTokenLocation(), "'" + NEIGHBOURS + "' must be a list, got "
                                    + describe(v));
                        }
                        neighbours = neighbours(file, p);
                    } else if (LINEAGE.equals(key)) {
                        if (v != JsonToken.START_OBJECT) {
                            throw bad(file, p.currentTokenLocation(), "'" + LINEAGE + "' must be an object, got "
                                    + describe(v));
                        }
                        JsonNode n = MAPPER.readTree(p);
                        n.fields().forEachRemaining(f -> lineage.put(f.getKey(),
                                MAPPER.convertValue(f.getValue(), Object.class)));
                    } else {
                        p.skipChildren();
                    }
                }
            }
            if (neighbours == null) {
                throw new BadInputException(file + ": expected a JSON list of neighbours or an object with '"
                        + NEIGHBOURS + "'; write it with `flywheel mine --out`");
            }
            return new Contents(neighbours, lineage);
        } catch (JsonProcessingException e) {
            throw JsonFiles.notJson(file, e, EXPECTED);
        }
    }

    /** Reads the neighbours of the list the parser is at (its START_ARRAY), through its END_ARRAY. */
    private static List<MinedEpisode> neighbours(Path file, JsonParser p) throws IOException {
        List<MinedEpisode> out = new ArrayList<>();
        for (int i = 0; p.nextToken() != JsonToken.END_ARRAY; i++) {
            JsonLocation start = p.currentTokenLocation();
            if (p.currentToken() != JsonToken.START_OBJECT) {
                throw bad(file, start, "neighbour " + i + " must be an object with " + FIELDS + ", got "
                        + describe(p.currentToken()));
            }
            Map<String, JsonNode> values = new LinkedHashMap<>();
            Map<String, JsonLocation> where = new LinkedHashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                where.put(key, p.currentTokenLocation());
                values.put(key, MAPPER.readTree(p));
            }
            for (String k : FIELDS) {
                if (values.get(k) == null || values.get(k).isNull()) {
                    throw bad(file, start, "neighbour " + i + " has no '" + k + "'");
                }
            }
            for (String k : List.of("episode_id", "query_episode_id")) {
                if (!values.get(k).isTextual() || values.get(k).asText().isEmpty()) {
                    throw bad(file, where.get(k), "neighbour " + i + ": expected '" + k + "' to be an episode id (text),"
                            + " got " + values.get(k));
                }
            }
            JsonNode d = values.get("distance");
            if (!d.isNumber() || !Double.isFinite(d.asDouble())) {
                throw bad(file, where.get("distance"), "neighbour " + i + ": expected a number 'distance', got " + d);
            }
            JsonNode r = values.get("rank");
            if (!r.isIntegralNumber() || !r.canConvertToInt() || r.asInt() < 1) {
                throw bad(file, where.get("rank"), "neighbour " + i + ": expected a 'rank' >= 1 (an integer), got " + r);
            }
            out.add(new MinedEpisode(values.get("episode_id").asText(), values.get("query_episode_id").asText(),
                    d.asDouble(), r.asInt()));
        }
        return out;
    }

    private static BadInputException bad(Path file, JsonLocation at, String what) {
        return new BadInputException(file + ": line " + at.getLineNr() + ", column " + at.getColumnNr() + ": " + what);
    }

    private static String describe(JsonToken t) {
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "a list";
            case VALUE_STRING -> "text";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> String.valueOf(t);
        };
    }
}
