package io.flywheel.fleet.upload;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;

/**
 * The staging area of a local lake: {@code <lake>/_staging/uploads/<robot>/<upload-id>.part} (the bytes received so
 * far) and {@code <upload-id>.json} (a {@link StagedUpload}, written whole with write-then-rename), and the raw layer
 * files land in, {@code <lake>/raw/<robot>/}. A landed file ingest refuses (not a recording it can read) is moved out
 * of the raw layer to {@code <lake>/_staging/rejected/<robot>/}, kept there for people to look at: the raw layer
 * holds only files that are in the lake or on their way into it. All lie in the lake's folder, so landing is a rename
 * on one file system. None is a Lance table: {@code lake cleanup} does not touch them.
 */
public final class Staging {
    /** The staging folder, relative to the lake root. */
    public static final String FOLDER = "_staging/uploads";
    /** Where landed files ingest refused are moved, relative to the lake root. */
    public static final String REJECTED = "_staging/rejected";
    /** The raw layer folder of uploaded files, relative to the lake root. */
    public static final String RAW = "raw";

    private static final ObjectMapper JSON = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final Path lakeRoot;
    private final Path dir;

    /** @param lakeRoot the local lake's folder */
    public Staging(Path lakeRoot) {
        this.lakeRoot = lakeRoot.toAbsolutePath().normalize();
        this.dir = this.lakeRoot.resolve(FOLDER);
    }

    /** @return the lake's folder */
    public Path lakeRoot() {
        return lakeRoot;
    }

    /** @return the file the upload's bytes are staged in */
    public Path partFile(StagedUpload u) {
        return dir.resolve(u.robotId()).resolve(u.uploadId() + ".part");
    }

    /** @return the upload's state file */
    public Path stateFile(StagedUpload u) {
        return dir.resolve(u.robotId()).resolve(u.uploadId() + ".json");
    }

    /** @return where the upload lands: {@code <lake>/raw/<robot>/<landed name>} */
    public Path landedFile(StagedUpload u) {
        return lakeRoot.resolve(RAW).resolve(u.robotId()).resolve(u.landedName());
    }

    /** @return {@code path} relative to the lake root, with '/' separators */
    public String relative(Path path) {
        return lakeRoot.relativize(path.toAbsolutePath().normalize()).toString().replace('\\', '/');
    }

    /**
     * Writes the upload's state file whole (a temporary file renamed over it), so that a crash leaves the old or the
     * new state, never half of one.
     *
     * @throws UncheckedIOException when the file cannot be written
     */
    public void save(StagedUpload u) {
        Path f = stateFile(u);
        try {
            Files.createDirectories(f.getParent());
            Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
            Files.write(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(u));
            move(tmp, f);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the upload state " + f + ": " + e.getMessage(), e);
        }
    }

    /** Removes the upload's staging file and then its state file (either may be gone already). */
    public void remove(StagedUpload u) {
        try {
            Files.deleteIfExists(partFile(u));
            Files.deleteIfExists(stateFile(u));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the staging files of " + u.uploadId() + ": " + e.getMessage(), e);
        }
    }

    /** Removes the upload's state file only (its bytes have landed). */
    public void removeState(StagedUpload u) {
        try {
            Files.deleteIfExists(stateFile(u));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + stateFile(u) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Moves the staging file to where the upload lands, atomically (replacing a file of the same name: same name, same
     * content).
     *
     * @return the landed file
     */
    public Path land(StagedUpload u) throws IOException {
        return landFile(partFile(u), u);
    }

    /**
     * Moves a file finished elsewhere in the lake's folder (a live episode's MCAP) to where the upload lands,
     * atomically.
     *
     * @return the landed file
     */
    public Path landFile(Path file, StagedUpload u) throws IOException {
        Path target = landedFile(u);
        Files.createDirectories(target.getParent());
        move(file, target);
        return target;
    }

    /**
     * Moves a landed file ingest refused out of the raw layer, to {@code _staging/rejected/<robot>/<landed name>}.
     *
     * @return its new place, relative to the lake root
     */
    public String reject(StagedUpload u) throws IOException {
        Path target = lakeRoot.resolve(REJECTED).resolve(u.robotId()).resolve(u.landedName());
        Files.createDirectories(target.getParent());
        move(landedFile(u), target);
        return relative(target);
    }

    /**
     * Reads every state file, repairing what a crash between two steps left: a {@code STAGING} upload whose staging
     * file is gone but whose landed file is there had landed ({@code LANDED}); one with neither, or a landed one
     * whose landed file is gone, is dropped (its state file removed). State files that cannot be read are skipped
     * and named in {@code problems}.
     *
     * @param problems receives one line per state file skipped
     * @return the uploads, in no particular order
     */
    public List<StagedUpload> recover(List<String> problems) {
        List<StagedUpload> out = new ArrayList<>();
        for (Path f : files(dir, "*.json")) {
            StagedUpload u;
            try {
                u = JSON.readValue(f.toFile(), StagedUpload.class);
                u.fileKind();
            } catch (IOException | RuntimeException e) {
                problems.add(f + ": not an upload state file (" + e.getMessage() + "); left as it is");
                continue;
            }
            boolean part = Files.isRegularFile(partFile(u));
            boolean landed = Files.isRegularFile(u.landedPath().isEmpty() ? landedFile(u)
                    : lakeRoot.resolve(u.landedPath()));
            if (StagedUpload.STAGING.equals(u.state())) {
                if (part) {
                    out.add(u);
                } else if (landed) {
                    u = u.withState(StagedUpload.LANDED, relative(landedFile(u)), u.message());
                    save(u);
                    out.add(u);
                } else {
                    removeState(u);
                }
            } else if (landed) {
                out.add(u);
            } else {
                removeState(u);
            }
        }
        return out;
    }

    /**
     * An upload as its state file says, with the bytes staged so far.
     *
     * @param upload the state file's contents
     * @param stagedBytes the size of its staging file (0 once landed, or when it is gone)
     */
    public record Staged(StagedUpload upload, long stagedBytes) {}

    /**
     * A file in the raw layer of uploads, {@code raw/<robot>/}.
     *
     * @param robotId the robot folder it is in
     * @param name its name: {@code <sha256>.mcap}, {@code <sha256>.bag} or a sidecar {@code <sha256>.<camera>.mp4}
     * @param sha256 the SHA-256 its name gives (the recording's, for a sidecar), lower-case hex; null when the name
     *     holds none
     * @param bytes its size
     * @param sidecar whether it is a sidecar video (ingested with its recording)
     */
    public record Landed(String robotId, String name, String sha256, long bytes, boolean sidecar) {}

    /**
     * Reads the state files as they are, without repairing anything ({@link #recover} is the gateway's): for readers
     * beside a running gateway, such as the console. Files that cannot be read (one being replaced this instant, a
     * damaged one) are left out.
     *
     * @return every upload the staging folder holds, by robot then upload id
     */
    public List<Staged> list() {
        List<Staged> out = new ArrayList<>();
        for (Path f : files(dir, "*.json")) {
            try {
                StagedUpload u = JSON.readValue(f.toFile(), StagedUpload.class);
                out.add(new Staged(u, StagedUpload.STAGING.equals(u.state()) ? stagedBytes(u) : 0));
            } catch (IOException | RuntimeException e) {
                // being replaced, or not ours: the gateway reports the damaged ones at its start
            }
        }
        out.sort(java.util.Comparator.comparing((Staged st) -> st.upload().robotId())
                .thenComparing(st -> st.upload().uploadId()));
        return out;
    }

    /** @return every file in {@code raw/<robot>/} folders, by robot then name */
    public List<Landed> landed() {
        List<Landed> out = new ArrayList<>();
        for (Path f : files(lakeRoot.resolve(RAW), "*")) {
            String name = f.getFileName().toString();
            if (name.startsWith(".")) {
                continue;
            }
            int dot = name.indexOf('.');
            String sha = dot > 0 && UploadIds.checkSha256(name.substring(0, dot)) == null
                    ? name.substring(0, dot).toLowerCase(java.util.Locale.ROOT) : null;
            long bytes;
            try {
                bytes = Files.size(f);
            } catch (IOException e) {
                continue; // gone meanwhile
            }
            out.add(new Landed(f.getParent().getFileName().toString(), name, sha, bytes, name.endsWith(".mp4")));
        }
        out.sort(java.util.Comparator.comparing(Landed::robotId).thenComparing(Landed::name));
        return out;
    }

    /** @return the regular files matching {@code glob} in the sub-folders of {@code root} (none when it is missing) */
    private static List<Path> files(Path root, String glob) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        try (DirectoryStream<Path> robots = Files.newDirectoryStream(root)) {
            for (Path robot : robots) {
                if (!Files.isDirectory(robot)) {
                    continue;
                }
                try (DirectoryStream<Path> fs = Files.newDirectoryStream(robot, glob)) {
                    for (Path f : fs) {
                        if (Files.isRegularFile(f)) {
                            out.add(f);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + root + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** @return when the upload's staging file was last written, ms since the Unix epoch; 0 when there is none */
    public long lastWriteMs(StagedUpload u) {
        try {
            return Files.getLastModifiedTime(partFile(u)).toMillis();
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the size of the upload's staging file, 0 when there is none */
    public long stagedBytes(StagedUpload u) {
        try {
            return Files.size(partFile(u));
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
