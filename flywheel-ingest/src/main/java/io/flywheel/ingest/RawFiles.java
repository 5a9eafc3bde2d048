package io.flywheel.ingest;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

import io.flywheel.raw.RawChannel;
import io.flywheel.raw.RawStorage;

/**
 * Where the raw files a reader is given as paths really are, and the URI the lake records for each: the byte source
 * of ingest (a {@link RawChannel}: the file's length and positioned reads, the shape of parquet-java's
 * {@code InputFile}).
 *
 * <ul>
 *   <li>{@link #local()}: every path is a file on this machine, recorded as its absolute {@code file:} URI.</li>
 *   <li>{@link #mirror}: paths under a local folder stand for objects of a remote store ({@code s3://bucket/key} is
 *       {@code ROOT/bucket/key}). A path whose file exists under the folder (a copy made before reading: folders,
 *       SQLite files, sidecar videos) is read locally; any other is read from the store by positioned reads
 *       (MCAP, ROS 1 bags). Either way the lake records the remote URI.</li>
 * </ul>
 */
public final class RawFiles {
    private static final RawFiles LOCAL = new RawFiles(null, null, null);

    private final Path root;
    private final String remoteBase;
    private final RawStorage remote;

    private RawFiles(Path root, String remoteBase, RawStorage remote) {
        this.root = root;
        this.remoteBase = remoteBase;
        this.remote = remote;
    }

    /** @return local files, recorded as {@code file:} URIs */
    public static RawFiles local() {
        return LOCAL;
    }

    /**
     * @param root the local folder that stands for the store
     * @param remoteBase the URI prefix of {@code root}, ending in {@code /} (e.g. {@code s3://})
     * @param remote opens a remote URI
     * @return paths under {@code root} as remote objects
     */
    public static RawFiles mirror(Path root, String remoteBase, RawStorage remote) {
        if (!remoteBase.endsWith("/")) {
            throw new IllegalArgumentException("remote base must end in '/', got " + remoteBase);
        }
        return new RawFiles(root.toAbsolutePath().normalize(), remoteBase, Objects.requireNonNull(remote));
    }

    /** @return the local path that stands for {@code uri} (under the mirror's root) */
    public Path pathOf(String uri) {
        if (root == null || !uri.startsWith(remoteBase)) {
            throw new IllegalArgumentException(uri + " is not under " + remoteBase);
        }
        return root.resolve(uri.substring(remoteBase.length())).normalize();
    }

    private boolean mirrored(Path p) {
        return root != null && p.toAbsolutePath().normalize().startsWith(root);
    }

    /** @return the URI the lake records for the file at {@code p} */
    public String uri(Path p) {
        Path a = p.toAbsolutePath().normalize();
        if (mirrored(a)) {
            return remoteBase + root.relativize(a).toString().replace('\\', '/');
        }
        return a.toUri().toString();
    }

    /** @return how messages name the file: the path for a local file, the remote URI otherwise */
    public String name(Path p) {
        return mirrored(p) ? uri(p) : p.toString();
    }

    /** @return true when {@code p} is read from this machine's file system (so it may be memory-mapped) */
    public boolean isLocal(Path p) {
        return !mirrored(p) || Files.isRegularFile(p);
    }

    /**
     * @return a channel on the file (the caller closes it)
     * @throws java.nio.file.NoSuchFileException when it does not exist
     */
    public RawChannel open(Path p) throws IOException {
        if (isLocal(p)) {
            return RawStorage.of(FileChannel.open(p, StandardOpenOption.READ));
        }
        return remote.open(uri(p));
    }
}
