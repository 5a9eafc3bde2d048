package io.flywheel.lake;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * Object-store options for a lake on S3 or an S3-compatible server, as Lance's storage options
 * ({@code aws_endpoint}, {@code aws_region}, {@code aws_access_key_id},
 * {@code aws_secret_access_key}, {@code allow_http}, plus any other key Lance accepts). A local
 * lake needs none.
 *
 * <p>Sources, strongest first (see {@link #resolve}): options given in code, the config file
 * ({@code flywheel.yaml}), the environment ({@code AWS_ENDPOINT_URL}, {@code AWS_ACCESS_KEY_ID},
 * {@code AWS_SECRET_ACCESS_KEY}, {@code AWS_REGION}). The config file looks like:
 *
 * <pre>
 * storage:
 *   endpoint: http://127.0.0.1:9000
 *   region: us-east-1
 *   access_key_id: AKIA...
 *   secret_access_key: ...
 *   allow_http: true
 *   options:            # passed to Lance as they are
 *     aws_virtual_hosted_style_request: "false"
 * </pre>
 *
 * @param options Lance storage options (immutable)
 */
public record StorageConfig(Map<String, String> options) {
    public static final String ENDPOINT = "aws_endpoint";
    public static final String REGION = "aws_region";
    public static final String ACCESS_KEY_ID = "aws_access_key_id";
    public static final String SECRET_ACCESS_KEY = "aws_secret_access_key";
    public static final String ALLOW_HTTP = "allow_http";

    public StorageConfig {
        options = Map.copyOf(options);
    }

    /** @return no options (local lakes) */
    public static StorageConfig none() {
        return new StorageConfig(Map.of());
    }

    /** @return a new builder */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Reads the options of the AWS environment variables.
     *
     * @param env the environment, e.g. {@code System.getenv()}
     * @return options from {@code AWS_ENDPOINT_URL} (also sets {@code allow_http} when it is
     *     http://), {@code AWS_REGION} (else {@code AWS_DEFAULT_REGION}), {@code AWS_ACCESS_KEY_ID},
     *     {@code AWS_SECRET_ACCESS_KEY}
     */
    public static StorageConfig fromEnvironment(Map<String, String> env) {
        Builder b = builder();
        String endpoint = env.get("AWS_ENDPOINT_URL");
        if (endpoint != null && !endpoint.isBlank()) {
            b.endpoint(endpoint);
        }
        String region = env.getOrDefault("AWS_REGION", env.get("AWS_DEFAULT_REGION"));
        if (region != null && !region.isBlank()) {
            b.region(region);
        }
        if (env.get("AWS_ACCESS_KEY_ID") != null) {
            b.option(ACCESS_KEY_ID, env.get("AWS_ACCESS_KEY_ID"));
        }
        if (env.get("AWS_SECRET_ACCESS_KEY") != null) {
            b.option(SECRET_ACCESS_KEY, env.get("AWS_SECRET_ACCESS_KEY"));
        }
        return b.build();
    }

    /**
     * Reads the {@code storage:} section of a flywheel.yaml.
     *
     * @param file the YAML file
     * @return its options (none when the file has no storage section)
     * @throws LakeException when the file cannot be read or is not YAML of the shape above
     */
    public static StorageConfig fromYaml(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new io.flywheel.error.BadInputException("lake config " + file + ": cannot read YAML: " + e.getMessage(), e);
        }
        Builder b = builder();
        JsonNode s = root == null ? null : root.get("storage");
        if (s == null || s.isNull()) {
            return b.build();
        }
        if (!s.isObject()) {
            throw new io.flywheel.error.BadInputException("lake config " + file + ": 'storage' must be a mapping, got " + s.getNodeType());
        }
        s.fields().forEachRemaining(e -> {
            String k = e.getKey();
            JsonNode v = e.getValue();
            switch (k) {
                case "endpoint" -> b.endpoint(v.asText());
                case "region" -> b.region(v.asText());
                case "access_key_id" -> b.option(ACCESS_KEY_ID, v.asText());
                case "secret_access_key" -> b.option(SECRET_ACCESS_KEY, v.asText());
                case "allow_http" -> b.allowHttp(v.asBoolean());
                case "options" -> {
                    if (!v.isObject()) {
                        throw new io.flywheel.error.BadInputException("lake config " + file + ": 'storage.options' must be a mapping");
                    }
                    v.fields().forEachRemaining(o -> b.option(o.getKey(), o.getValue().asText()));
                }
                default -> throw new io.flywheel.error.BadInputException("lake config " + file + ": unknown key 'storage." + k
                        + "'; expected endpoint, region, access_key_id, secret_access_key, allow_http, options");
            }
        });
        return b.build();
    }

    /**
     * Merges the sources: every key of {@code explicit}, then keys of {@code file} not yet set,
     * then keys of {@code environment} not yet set.
     */
    public static StorageConfig resolve(StorageConfig explicit, StorageConfig file, StorageConfig environment) {
        Map<String, String> m = new LinkedHashMap<>(environment.options());
        m.putAll(file.options());
        m.putAll(explicit.options());
        return new StorageConfig(m);
    }

    @Override
    public String toString() {
        Map<String, String> shown = new LinkedHashMap<>(options);
        shown.computeIfPresent(SECRET_ACCESS_KEY, (k, v) -> "****");
        return "StorageConfig" + shown;
    }

    /** Builder for {@link StorageConfig}. */
    public static final class Builder {
        private final Map<String, String> options = new LinkedHashMap<>();

        private Builder() {}

        /** @param url S3 endpoint, e.g. {@code http://127.0.0.1:9000}; http:// also allows HTTP */
        public Builder endpoint(String url) {
            options.put(ENDPOINT, url);
            if (url.startsWith("http://")) {
                options.putIfAbsent(ALLOW_HTTP, "true");
            }
            return this;
        }

        public Builder region(String region) {
            options.put(REGION, region);
            return this;
        }

        public Builder credentials(String accessKeyId, String secretAccessKey) {
            options.put(ACCESS_KEY_ID, accessKeyId);
            options.put(SECRET_ACCESS_KEY, secretAccessKey);
            return this;
        }

        public Builder allowHttp(boolean allow) {
            options.put(ALLOW_HTTP, Boolean.toString(allow));
            return this;
        }

        /** Any other Lance storage option, passed as is. */
        public Builder option(String key, String value) {
            options.put(key, value);
            return this;
        }

        public StorageConfig build() {
            return new StorageConfig(options);
        }
    }
}
