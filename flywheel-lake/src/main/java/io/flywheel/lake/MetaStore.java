package io.flywheel.lake;

import java.util.List;

/**
 * The small files of a lake's commit protocol under {@code <lake>/_lake/}: commit points, the head hint and the
 * commit lock. Keys are relative paths such as {@code commits/00000000000000000012.json}.
 *
 * <p>The one operation the protocol's safety rests on is {@link #putIfAbsent}: it creates a key with its whole content
 * in one step or fails because the key exists. Locally that is a hard link of a complete temporary file; on S3 a PUT
 * with {@code If-None-Match: *} (the store's conditional PUT).
 */
interface MetaStore extends AutoCloseable {
    /**
     * @param key relative key
     * @return the content, or null when the key does not exist
     * @throws io.flywheel.error.StorageUnavailableException when the storage cannot be read
     */
    byte[] read(String key);

    /**
     * Creates the key with the content, atomically: readers see the whole content or no key.
     *
     * @return false when the key exists already (nothing was written)
     * @throws io.flywheel.error.StorageUnavailableException when the storage cannot be written
     */
    boolean putIfAbsent(String key, byte[] content);

    /**
     * Creates or replaces the key. Readers see the old or the new content, never a mix; concurrent writers may
     * overwrite each other (used for hints only).
     */
    void put(String key, byte[] content);

    /** Deletes the key; a missing key is not an error. */
    void delete(String key);

    /**
     * @param prefix key prefix, e.g. {@code commits/}
     * @param startAfter only keys sorting after this one, or null for all
     * @return the keys under the prefix, sorted
     */
    List<String> list(String prefix, String startAfter);

    /** @return the full location of a key, for messages */
    String describe(String key);

    @Override
    void close();
}
