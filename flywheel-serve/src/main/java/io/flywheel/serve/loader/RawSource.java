package io.flywheel.serve.loader;

import java.io.Closeable;
import java.io.IOException;

import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.RawLocator;
import io.flywheel.raw.RawStorage;

/**
 * Reads the image bytes a raw locator points at. One instance per loader worker thread (not
 * thread-safe). {@link #direct()} reads the raw files themselves; a cache supplies one that reads
 * its local copies first.
 */
public interface RawSource extends Closeable {
    /**
     * @param loc the locator
     * @return exactly {@code loc.length()} bytes
     * @throws IOException naming the file and offset when the bytes cannot be read
     */
    byte[] read(RawLocator loc) throws IOException;

    /** @return a source reading local raw files directly ({@link LocatorReader}) */
    static RawSource direct() {
        return direct(RawStorage.local());
    }

    /**
     * @param storage opens the raw files ({@code Lake.rawStorage()}: also a lake's files on S3)
     * @return a source reading the raw files directly ({@link LocatorReader})
     */
    static RawSource direct(RawStorage storage) {
        LocatorReader r = new LocatorReader(storage);
        return new RawSource() {
            @Override
            public byte[] read(RawLocator loc) throws IOException {
                return r.read(loc);
            }

            @Override
            public void close() throws IOException {
                r.close();
            }
        };
    }
}
