package io.flywheel.enrich.model;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.flywheel.enrich.Embedder;

/**
 * The per-user cache of embedding models: one {@code <model id>.onnx} file each, shared by all lakes.
 *
 * <p>Location: {@code $FLYWHEEL_MODELS_DIR} when set, else {@code $XDG_CACHE_HOME/flywheel/models},
 * else {@code ~/.cache/flywheel/models}. Files are written to a temporary name and moved into
 * place, so a reader never sees half a model.
 */
public final class ModelCache {
    private final Path dir;

    /**
     * A model file in the cache, as ONNX Runtime reads it.
     *
     * @param pooling the ONNX metadata {@code flywheel.pooling} (average, max); for a file without it,
     *                the pooling of the built-in model its id names ({@code flywheel.model_id}, else
     *                the file name; the average-pooled built-ins do not record it), else {@code unknown}
     */
    public record CachedModel(String id, Path file, long bytes, String sha256, int dimension, long[] inputShape,
                              String preprocessing, String source, String pooling) {}

    /** @param dir the cache folder (created on first install) */
    public ModelCache(Path dir) {
        this.dir = dir.toAbsolutePath().normalize();
    }

    /** @return the cache at {@link #defaultDir()} */
    public static ModelCache user() {
        return new ModelCache(defaultDir());
    }

    /** @return the per-user cache folder, as the class comment says */
    public static Path defaultDir() {
        String env = System.getenv("FLYWHEEL_MODELS_DIR");
        if (env != null && !env.isBlank()) {
            return Paths.get(env);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Paths.get(xdg, "flywheel", "models");
        }
        return Paths.get(System.getProperty("user.home"), ".cache", "flywheel", "models");
    }

    /** @return the cache folder */
    public Path dir() {
        return dir;
    }

    /** @return where the model's file lives in this cache, whether or not it is there */
    public Path path(BuiltinModel model) {
        return dir.resolve(model.id() + ".onnx");
    }

    /** @return the model's file when it is cached */
    public Optional<Path> find(BuiltinModel model) {
        Path p = path(model);
        return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    }

    /**
     * Opens a cached built-in model with its preprocessing ({@link Preprocessing#UNIT}).
     *
     * @param model   which model
     * @param threads ONNX Runtime intra-op threads
     * @throws Embedder.EmbeddingException when the model is not cached (the message says to run
     *                                     {@code flywheel models pull}) or cannot be loaded
     */
    public OnnxEmbedder open(BuiltinModel model, int threads) {
        Path p = find(model).orElseThrow(() -> new Embedder.EmbeddingException("model " + model.id()
                + " is not in the model cache " + dir + ": run `flywheel models pull --model "
                + model.shortName() + "`", null));
        return OnnxEmbedder.builder(p).modelId(model.id()).preprocessing(Preprocessing.UNIT).intraOpThreads(threads).build();
    }

    /**
     * Converts a built-in model from the package and stores it in the cache, replacing any older file.
     *
     * @return the cached model, read back through ONNX Runtime
     * @throws ModelFormatException when the package is not what the converter expects
     * @throws IOException when the cache folder cannot be written
     */
    public CachedModel install(BuiltinModel model, NsfwjsPackage pkg) throws IOException {
        byte[] onnx = NsfwjsConverter.convert(pkg, model);
        Files.createDirectories(dir);
        Path target = path(model);
        Path tmp = Files.createTempFile(dir, model.id() + ".", ".onnx.part");
        try {
            Files.write(tmp, onnx);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return describe(target);
    }

    /**
     * Lists the {@code .onnx} files of the cache, sorted by name, each opened with ONNX Runtime to
     * read its dimension and input shape.
     *
     * @return the models; empty when the folder does not exist
     * @throws Embedder.EmbeddingException when a file in the cache is not a usable model (names the file)
     */
    public List<CachedModel> list() throws IOException {
        List<Path> files = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.onnx")) {
            ds.forEach(files::add);
        }
        files.sort(null);
        List<CachedModel> out = new ArrayList<>();
        for (Path f : files) {
            out.add(describe(f));
        }
        return out;
    }

    /** Reads one model file's facts through ONNX Runtime. */
    public static CachedModel describe(Path file) throws IOException {
        try (OnnxEmbedder e = OnnxEmbedder.builder(file).inputSize(224).build()) {
            String id = e.metadata().getOrDefault("flywheel.model_id", e.modelId());
            String pooling = e.metadata().get("flywheel.pooling");
            if (pooling == null) {
                pooling = "unknown";
                for (BuiltinModel m : BuiltinModel.values()) {
                    if (m.id().equals(id)) {
                        pooling = m.pooling().label();
                    }
                }
            }
            return new CachedModel(id, file, Files.size(file), e.sha256(), e.dimension(), e.inputShape(),
                    e.metadata().getOrDefault("flywheel.preprocessing", "unknown"),
                    e.metadata().getOrDefault("flywheel.source", ""), pooling);
        }
    }

    /**
     * Downloads the nsfwjs 4.4.0 tarball from the npm registry and checks its sha512.
     *
     * @param url the tarball URL, normally {@link NsfwjsPackage#TARBALL_URL}
     * @return the package
     * @throws IOException when the download fails (status and URL in the message)
     * @throws ModelFormatException when the bytes fail the integrity check
     */
    public static NsfwjsPackage download(String url) throws IOException {
        HttpClient client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(Duration.ofSeconds(30)).build();
        HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofMinutes(5)).GET().build();
        HttpResponse<byte[]> resp;
        try {
            resp = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("download of " + url + " interrupted", e);
        } catch (IOException e) {
            throw new IOException("download of " + url + " failed: " + e.getMessage(), e);
        }
        if (resp.statusCode() != 200) {
            throw new IOException("download of " + url + " failed: HTTP " + resp.statusCode());
        }
        return NsfwjsPackage.fromTarball(resp.body(), url);
    }
}
