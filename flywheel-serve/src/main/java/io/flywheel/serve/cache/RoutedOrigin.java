package io.flywheel.serve.cache;

import java.io.IOException;
import java.util.List;

/**
 * The origin of everything a warm plan names: keys under {@code raw/} are raw files on the local
 * file system ({@code raw/<absolute path>}), every other key is a lake key.
 */
public final class RoutedOrigin implements Origin {
    private final Origin lake;
    private final LocalOrigin raw = new LocalOrigin(java.nio.file.Path.of("/"));

    /** @param lake the lake's storage */
    public RoutedOrigin(Origin lake) {
        this.lake = lake;
    }

    @Override
    public String describe() {
        return lake.describe() + " (+ raw files)";
    }

    private static boolean isRaw(String key) {
        return key.startsWith("raw/");
    }

    @Override
    public long size(String key) throws IOException {
        return isRaw(key) ? raw.size(key.substring(4)) : lake.size(key);
    }

    @Override
    public byte[] read(String key, ByteRange range) throws IOException {
        return isRaw(key) ? raw.read(key.substring(4), range) : lake.read(key, range);
    }

    @Override
    public List<Entry> list(String prefix) throws IOException {
        return lake.list(prefix);
    }

    @Override
    public void close() throws IOException {
        lake.close();
    }
}
