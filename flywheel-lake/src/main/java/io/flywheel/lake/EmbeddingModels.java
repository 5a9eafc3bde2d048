package io.flywheel.lake;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.flywheel.error.NotFoundException;

/**
 * The embedding models of a lake: the lake property {@value #PROPERTY}, a JSON object from model id to
 * {@code {"dimension": D, "sha256": "...", "column": "emb_<key>", "registered_at_ns": t}}, written in the commit
 * that adds the model's columns ({@link Lake#registerModel}). Immutable.
 */
public final class EmbeddingModels {
    /** The lake property holding the registry. */
    public static final String PROPERTY = "flywheel.models";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_KEY = 48;

    private final Map<String, EmbeddingModel> byId;

    private EmbeddingModels(Map<String, EmbeddingModel> byId) {
        this.byId = Collections.unmodifiableMap(new TreeMap<>(byId));
    }

    /** @return a registry without models */
    public static EmbeddingModels none() {
        return new EmbeddingModels(Map.of());
    }

    /**
     * @param properties a snapshot's lake properties
     * @return the models registered there (none when the property is missing)
     * @throws LakeFormatException when the property is not the JSON this class writes (naming the entry)
     */
    public static EmbeddingModels of(Map<String, String> properties) {
        String json = properties.get(PROPERTY);
        if (json == null || json.isBlank()) {
            return none();
        }
        Map<String, EmbeddingModel> out = new TreeMap<>();
        try {
            JsonNode root = JSON.readTree(json);
            if (!root.isObject()) {
                throw new LakeFormatException("lake property " + PROPERTY + " is not a JSON object: " + json);
            }
            var it = root.fields();
            while (it.hasNext()) {
                var e = it.next();
                JsonNode m = e.getValue();
                if (!m.path("dimension").canConvertToInt() || !m.path("column").isTextual()) {
                    throw new LakeFormatException("lake property " + PROPERTY + ": model '" + e.getKey()
                            + "' lacks an integer dimension or a column: " + m);
                }
                out.put(e.getKey(), new EmbeddingModel(e.getKey(), m.get("dimension").asInt(),
                        m.path("sha256").asText(""), m.get("column").asText(), m.path("registered_at_ns").asLong(0)));
            }
        } catch (JsonProcessingException e) {
            throw new LakeFormatException("lake property " + PROPERTY + " is not JSON: " + e.getOriginalMessage(), e);
        }
        return new EmbeddingModels(out);
    }

    /** @return the models, by id */
    public List<EmbeddingModel> all() {
        return List.copyOf(byId.values());
    }

    /** @return whether no model is registered */
    public boolean isEmpty() {
        return byId.isEmpty();
    }

    /** @return the model with that id, if registered */
    public Optional<EmbeddingModel> get(String id) {
        return Optional.ofNullable(byId.get(id));
    }

    /** @return the model whose vectors live in that column, if any */
    public Optional<EmbeddingModel> byColumn(String column) {
        return byId.values().stream().filter(m -> m.column().equals(column)).findFirst();
    }

    /**
     * The model a reader of embeddings uses.
     *
     * @param requested a model id, or null for the lake's default: the model registered last (the newest enrich model)
     * @return the model
     * @throws NotFoundException when the lake has no such model (naming the ones it has), or no model at all (naming
     *     the command that embeds)
     */
    public EmbeddingModel resolve(String requested, String lakeLocation) {
        if (byId.isEmpty()) {
            throw new NotFoundException("no episode of " + lakeLocation + " has an embedding yet: no embedding model"
                    + " is registered; run `flywheel enrich " + lakeLocation + "` with a model first");
        }
        if (requested == null) {
            return byId.values().stream().max(Comparator.comparingLong(EmbeddingModel::registeredAtNs)
                    .thenComparing(EmbeddingModel::id)).orElseThrow();
        }
        EmbeddingModel m = byId.get(requested);
        if (m == null) {
            throw new NotFoundException("the lake at " + lakeLocation + " has no embeddings of model '" + requested
                    + "' (its models: " + String.join(", ", byId.keySet()) + ")");
        }
        return m;
    }

    /** @return this registry with {@code m} added (or replacing the entry of the same id) */
    public EmbeddingModels with(EmbeddingModel m) {
        Map<String, EmbeddingModel> next = new LinkedHashMap<>(byId);
        next.put(m.id(), m);
        return new EmbeddingModels(next);
    }

    /** @return the value of {@value #PROPERTY} for this registry */
    public String toJson() {
        ObjectNode root = JSON.createObjectNode();
        for (EmbeddingModel m : byId.values()) {
            ObjectNode n = root.putObject(m.id());
            n.put("dimension", m.dimension());
            n.put("sha256", m.sha256());
            n.put("column", m.column());
            n.put("registered_at_ns", m.registeredAtNs());
        }
        return root.toString();
    }

    /**
     * The column name for a new model: {@code emb_} then the id in lower case with every character outside
     * {@code [a-z0-9_]} replaced by {@code _} (runs collapsed, at most {@value #MAX_KEY} characters), then
     * {@code _2}, {@code _3}, ... when another model has that column already.
     *
     * @param id the model id
     * @return a column name that every Lance and SQL reader accepts unquoted
     */
    public String columnFor(String id) {
        String key = id.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]+", "_").replaceAll("_+", "_")
                .replaceAll("^_|_$", "");
        if (key.length() > MAX_KEY) {
            key = key.substring(0, MAX_KEY);
        }
        if (key.isEmpty()) {
            key = "model";
        }
        String base = TableSchemas.MODEL_COLUMN_PREFIX + key;
        List<String> taken = new ArrayList<>();
        byId.values().forEach(m -> taken.add(m.column()));
        String c = base;
        for (int n = 2; taken.contains(c); n++) {
            c = base + "_" + n;
        }
        return c;
    }

    @Override
    public String toString() {
        return "EmbeddingModels" + byId.values();
    }
}
