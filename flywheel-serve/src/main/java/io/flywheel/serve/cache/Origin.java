package io.flywheel.serve.cache;

import java.io.IOException;
import java.util.List;

/**
 * Where the cached bytes come from: the lake's storage (a local folder or an S3 bucket prefix),
 * addressed by keys relative to the lake root ({@code trainset_samples.lance/data/x.lance}).
 * Implementations are thread-safe.
 */
public interface Origin extends AutoCloseable {
    /** An object under the origin. @param key key relative to the root @param size bytes */
    record Entry(String key, long size) {}

    /** @return the root, for messages: a folder or {@code s3://bucket/prefix} */
    String describe();

    /**
     * @param key key relative to the root
     * @return the object's size in bytes
     * @throws java.nio.file.NoSuchFileException when there is no such object
     * @throws IOException when the storage cannot be read
     */
    long size(String key) throws IOException;

    /**
     * @param key key relative to the root
     * @param range bytes to read; must lie inside the object
     * @return exactly {@code range.length()} bytes
     * @throws IOException naming the key and range when the object is shorter or cannot be read
     */
    byte[] read(String key, ByteRange range) throws IOException;

    /**
     * @param prefix key prefix (e.g. {@code trainset_samples.lance/_versions/})
     * @return every object whose key starts with the prefix, sorted by key
     * @throws IOException when the storage cannot be listed
     */
    List<Entry> list(String prefix) throws IOException;

    @Override
    default void close() throws IOException {}
}
