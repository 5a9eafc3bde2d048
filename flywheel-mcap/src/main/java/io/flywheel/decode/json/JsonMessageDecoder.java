package io.flywheel.decode.json;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flywheel.decode.DecodeException;
import io.flywheel.decode.MessageDecoder;

/**
 * Decodes MCAP messages of message encoding {@code json} (MCAP well-known encodings: UTF-8 JSON,
 * schema encoding {@code jsonschema} or no schema) into the tree of {@link MessageDecoder}:
 * objects become {@code LinkedHashMap<String, Object>} in document order (a repeated key keeps its
 * last value), arrays {@code List}, integers {@code Integer} when they fit in 32 bits, else
 * {@code Long} when they fit in 64 bits, else {@code BigInteger}; numbers with a fraction or
 * exponent {@code Double}; strings, booleans and null as themselves. {@code NaN}, {@code Infinity}
 * and {@code -Infinity} (written by Python's {@code json}) are accepted as Double.
 *
 * <p>Where the JSON schema gives a property {@code "type": "string"} with
 * {@code "contentEncoding": "base64"} (Foxglove's convention for bytes fields), its value is decoded
 * to {@code byte[]}. The schema is followed through {@code properties}, {@code items} and
 * {@code additionalProperties}; {@code $ref}, {@code oneOf}/{@code anyOf} are not followed (those
 * fields stay strings). Immutable and thread-safe.
 */
public final class JsonMessageDecoder implements MessageDecoder {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .build();

    /** Where in the document base64 strings are: a schema reduced to the paths that hold them. */
    private static final class Base64Paths {
        boolean base64;
        final Map<String, Base64Paths> properties = new HashMap<>();
        Base64Paths items;
        Base64Paths additional;

        boolean isEmpty() {
            return !base64 && properties.isEmpty() && items == null && additional == null;
        }
    }

    private final String name;
    private final Base64Paths base64;

    private JsonMessageDecoder(String name, Base64Paths base64) {
        this.name = name;
        this.base64 = base64;
    }

    /**
     * Factory for the registry: message encoding {@code json}, schema encoding {@code jsonschema}
     * or none.
     *
     * @param schemaName the schema's name, used in error messages (may be empty)
     * @param schemaData the JSON schema as UTF-8, or null / empty for schemaless messages
     * @return the decoder
     * @throws DecodeException when the schema is not valid JSON
     */
    public static MessageDecoder forSchema(String schemaName, byte[] schemaData) throws DecodeException {
        String name = schemaName == null || schemaName.isEmpty() ? "json" : schemaName;
        if (schemaData == null || schemaData.length == 0) {
            return new JsonMessageDecoder(name, null);
        }
        JsonNode schema;
        try {
            schema = new ObjectMapper(FACTORY).readTree(schemaData);
        } catch (IOException e) {
            throw new DecodeException(name + ": the JSON schema is not valid JSON: " + e.getMessage(), e);
        }
        Base64Paths paths = collect(schema, 0);
        return new JsonMessageDecoder(name, paths == null || paths.isEmpty() ? null : paths);
    }

    /** @return a decoder without a schema (no base64 fields) */
    public static JsonMessageDecoder schemaless() {
        return new JsonMessageDecoder("json", null);
    }

    private static Base64Paths collect(JsonNode s, int depth) {
        if (s == null || !s.isObject() || depth > 64) {
            return null;
        }
        Base64Paths p = new Base64Paths();
        p.base64 = "string".equals(s.path("type").asText()) && "base64".equals(s.path("contentEncoding").asText());
        JsonNode props = s.get("properties");
        if (props != null && props.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = props.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                Base64Paths c = collect(e.getValue(), depth + 1);
                if (c != null && !c.isEmpty()) {
                    p.properties.put(e.getKey(), c);
                }
            }
        }
        Base64Paths items = collect(s.get("items"), depth + 1);
        p.items = items == null || items.isEmpty() ? null : items;
        Base64Paths add = collect(s.get("additionalProperties"), depth + 1);
        p.additional = add == null || add.isEmpty() ? null : add;
        return p;
    }

    /**
     * @param data one UTF-8 JSON document, from position to limit; the position is not changed
     * @return the decoded tree (a Map when the document is an object)
     * @throws DecodeException naming the byte offset when the JSON is malformed, there is content
     *     after the document, or a base64 field is not valid base64
     */
    @Override
    public Object decode(ByteBuffer data) throws DecodeException {
        byte[] bytes;
        int off;
        int len = data.remaining();
        if (data.hasArray()) {
            bytes = data.array();
            off = data.arrayOffset() + data.position();
        } else {
            bytes = new byte[len];
            data.duplicate().get(bytes);
            off = 0;
        }
        try (JsonParser p = FACTORY.createParser(bytes, off, len)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new DecodeException(name + " json message at byte 0: empty document (" + len + " bytes)");
            }
            Object value = read(p, t, base64, "");
            if (p.nextToken() != null) {
                throw new DecodeException(name + " json message at byte " + offset(p)
                        + ": content after the end of the JSON document");
            }
            return value;
        } catch (JsonProcessingException e) {
            long at = e.getLocation() == null ? -1 : e.getLocation().getByteOffset();
            throw new DecodeException(name + " json message at byte " + at + ": " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new DecodeException(name + " json message: " + e.getMessage(), e);
        }
    }

    private static long offset(JsonParser p) {
        return p.currentTokenLocation().getByteOffset();
    }

    private Object read(JsonParser p, JsonToken t, Base64Paths b64, String path) throws IOException, DecodeException {
        switch (t) {
            case START_OBJECT: {
                Map<String, Object> m = new LinkedHashMap<>();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String key = p.currentName();
                    Base64Paths child = null;
                    if (b64 != null) {
                        child = b64.properties.get(key);
                        if (child == null) {
                            child = b64.additional;
                        }
                    }
                    m.put(key, read(p, p.nextToken(), child, path + "." + key));
                }
                return m;
            }
            case START_ARRAY: {
                List<Object> l = new ArrayList<>();
                Base64Paths child = b64 == null ? null : b64.items;
                for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                    l.add(read(p, e, child, path + "[]"));
                }
                return l;
            }
            case VALUE_STRING: {
                String s = p.getText();
                if (b64 != null && b64.base64) {
                    try {
                        return Base64.getDecoder().decode(s);
                    } catch (IllegalArgumentException e) {
                        throw new DecodeException(name + " json message at byte " + offset(p) + ": field '"
                                + path.substring(Math.min(1, path.length())) + "' has contentEncoding base64 but is "
                                + "not valid base64 (" + e.getMessage() + ")");
                    }
                }
                return s;
            }
            case VALUE_NUMBER_INT:
                return switch (p.getNumberType()) {
                    case INT -> p.getIntValue();
                    case LONG -> p.getLongValue();
                    default -> {
                        BigInteger v = p.getBigIntegerValue();
                        yield v.bitLength() < 32 ? (Object) v.intValue() : v.bitLength() < 64 ? (Object) v.longValue() : v;
                    }
                };
            case VALUE_NUMBER_FLOAT:
                return p.getDoubleValue();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return null;
            default:
                throw new DecodeException(name + " json message at byte " + offset(p) + ": unexpected " + t);
        }
    }
}
