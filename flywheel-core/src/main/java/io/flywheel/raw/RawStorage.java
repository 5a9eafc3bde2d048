package io.flywheel.raw;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import io.flywheel.error.BadInputException;

/**
 * Opens raw files by the URI the lake records for them ({@code raw_files.uri}, {@code ImageLocator.rawUri}):
 * {@code file:} URIs on this machine, and, from a lake on S3 ({@code Lake.rawStorage()}), {@code s3://} objects in
 * the lake's bucket read by byte range.
 */
@FunctionalInterface
public interface RawStorage {
    /**
     * @param uri a raw file's URI
     * @return a channel on it (the caller closes it)
     * @throws BadInputException for a scheme this storage cannot read, naming it
     * @throws IOException when the file cannot be opened (a missing file: {@link java.nio.file.NoSuchFileException})
     */
    RawChannel open(String uri) throws IOException;

    /** @return the storage of {@code file:} URIs only */
    static RawStorage local() {
        return uri -> {
            URI u = URI.create(uri);
            if (!"file".equals(u.getScheme())) {
                throw new BadInputException(uri + ": only file: URIs can be read here, found scheme '" + u.getScheme()
                        + "' (a raw file on S3 is read through the lake that holds it)");
            }
            return of(FileChannel.open(Path.of(u), StandardOpenOption.READ));
        };
    }

    /** @return {@code fc} as a raw channel (closing it closes {@code fc}) */
    static RawChannel of(FileChannel fc) {
        return new RawChannel() {
            @Override
            public long size() throws IOException {
                return fc.size();
            }

            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                return fc.read(dst, position);
            }

            @Override
            public void close() throws IOException {
                fc.close();
            }
        };
    }
}
