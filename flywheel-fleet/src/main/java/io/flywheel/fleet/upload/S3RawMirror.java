package io.flywheel.fleet.upload;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;

import io.flywheel.error.StorageUnavailableException;
import io.flywheel.lake.S3Location;
import io.flywheel.lake.StorageConfig;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * The staging of uploads to a lake on S3: each upload is an S3 multipart upload (Amazon S3 API,
 * {@code CreateMultipartUpload} / {@code UploadPart} / {@code CompleteMultipartUpload} / {@code AbortMultipartUpload})
 * straight to the key it lands at, {@code <lake prefix>/raw/<robot>/<landed name>}, fed from the gateway's local
 * staging file as the bytes arrive: every time {@link #partBytes} more bytes are staged, they are sent as the next
 * part. At END, after the SHA-256 is checked, the rest is sent as the last part and the upload completed: the object
 * appears whole or not at all (S3 makes a completed multipart upload visible at once). A hash mismatch or an expired
 * upload aborts it, so nothing half-landed is ever visible in the bucket.
 *
 * <p>Which parts are in S3 is kept beside the local staging file ({@code <upload-id>.s3.json}, written whole with
 * write-then-rename), so a gateway restarted on the same machine continues the same multipart upload. A gateway on
 * another machine has neither the staging file nor this record: the robot starts again at offset 0, and the
 * abandoned multipart upload is left for the bucket's lifecycle rule ({@code AbortIncompleteMultipartUpload}).
 */
public final class S3RawMirror implements AutoCloseable {
    /** Default part size: S3 wants at least 5 MiB for every part but the last. */
    public static final long DEFAULT_PART_BYTES = 8L << 20;

    private static final ObjectMapper JSON = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /** One part sent. */
    record Part(int number, String etag, long bytes) {}

    /** What is in S3 of one upload. */
    record State(String s3UploadId, String key, List<Part> parts) {
        long sent() {
            return parts.stream().mapToLong(Part::bytes).sum();
        }
    }

    private final S3Location lake;
    private final S3Client s3;
    private final Staging staging;
    private final long partBytes;
    /** Upload id to its state as last saved (what its state file holds): the hot path does not read the file. */
    private final java.util.Map<String, State> states = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param lakeUri the lake, {@code s3://bucket/prefix}
     * @param storage the lake's storage options (endpoint, region, credentials)
     * @param staging the local staging the bytes are first written to
     * @param partBytes the size of every part but the last, 5 MiB to 1 GiB ({@link #DEFAULT_PART_BYTES})
     * @throws IllegalArgumentException for another part size (S3 refuses parts under 5 MiB but the last)
     */
    public S3RawMirror(String lakeUri, StorageConfig storage, Staging staging, long partBytes) {
        if (partBytes < 5L << 20 || partBytes > 1L << 30) {
            throw new IllegalArgumentException("the S3 part size must be 5 MiB..1 GiB, got " + partBytes);
        }
        this.lake = S3Location.parse(lakeUri);
        this.s3 = lake.client(storage, 32);
        this.staging = staging;
        this.partBytes = partBytes;
    }

    /** @return the object key an upload lands at */
    String key(StagedUpload u) {
        return lake.key(Staging.RAW + "/" + u.robotId() + "/" + u.landedName());
    }

    /** @return the {@code s3://} URI an upload lands at (what raw_files.uri records) */
    public String uri(StagedUpload u) {
        return "s3://" + lake.bucket() + "/" + key(u);
    }

    /** @return the {@code s3://} URI of a path relative to the lake root ({@code raw/...}, {@code _staging/...}) */
    public String uriOf(String lakePath) {
        return "s3://" + lake.bucket() + "/" + lake.key(lakePath);
    }

    /** @return the path relative to the lake root of an {@code s3://} URI in the lake's bucket and prefix */
    public java.util.Optional<String> pathOf(String uri) {
        String root = "s3://" + lake.bucket() + "/" + lake.prefix();
        return uri.startsWith(root) ? java.util.Optional.of(uri.substring(root.length())) : java.util.Optional.empty();
    }

    /**
     * Copies a finished file (a live episode's MCAP) to where {@code u} lands, as one multipart upload.
     *
     * @return the object's URI
     */
    public String put(StagedUpload u, Path file) throws IOException {
        long size = Files.size(file);
        State s;
        try {
            String id = s3.createMultipartUpload(b -> b.bucket(lake.bucket()).key(key(u))).uploadId();
            s = new State(id, key(u), List.of());
        } catch (SdkException e) {
            throw unavailable("cannot start the multipart upload of " + uri(u), e);
        }
        try {
            while (size - s.sent() > partBytes) {
                s = send(u, s, partBytes, file, false);
            }
            s = send(u, s, size - s.sent(), file, false);
            finish(u, s);
        } catch (RuntimeException e) {
            abortQuietly(s);
            throw e;
        }
        return uri(u);
    }

    private Path stateFile(StagedUpload u) {
        Path part = staging.partFile(u);
        return part.resolveSibling(u.uploadId() + ".s3.json");
    }

    /** @return what is in S3 of the upload: held in memory once read, the file read only the first time */
    private State load(StagedUpload u) {
        State s = states.get(u.uploadId());
        return s != null ? s : read(u);
    }

    private State read(StagedUpload u) {
        Path f = stateFile(u);
        try {
            return JSON.readValue(f.toFile(), State.class);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            if (!Files.exists(f)) {
                return null;
            }
            throw new UncheckedIOException("cannot read " + f + ": " + e.getMessage(), e);
        }
    }

    private void save(StagedUpload u, State s) {
        Path f = stateFile(u);
        try {
            Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
            Files.write(tmp, JSON.writeValueAsBytes(s));
            Files.move(tmp, f, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            states.put(u.uploadId(), s);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + f + ": " + e.getMessage(), e);
        }
    }

    /**
     * The upload is (re)opened with {@code staged} bytes in its staging file: keeps the multipart upload if the parts
     * sent are all among those bytes, else aborts it and starts a new one.
     */
    public void opened(StagedUpload u, long staged) {
        State s = read(u);
        if (s != null && s.sent() <= staged && s.key().equals(key(u))) {
            states.put(u.uploadId(), s);
            return;
        }
        if (s != null) {
            abortQuietly(s);
        }
        try {
            String id = s3.createMultipartUpload(b -> b.bucket(lake.bucket()).key(key(u))).uploadId();
            save(u, new State(id, key(u), List.of()));
        } catch (SdkException e) {
            throw unavailable("cannot start the multipart upload of " + uri(u), e);
        }
    }

    /** {@code staged} bytes are in the staging file now: sends every whole part not sent yet. */
    public void written(StagedUpload u, long staged) {
        State s = load(u);
        if (s == null) {
            return;
        }
        while (staged - s.sent() >= partBytes) {
            s = send(u, s, partBytes);
        }
    }

    /**
     * Sends the rest as the last part and completes the multipart upload: the object is in the bucket, whole.
     *
     * @param size the file's size, all of it in the staging file
     * @return the object's URI
     */
    public String complete(StagedUpload u, long size) {
        State s = load(u);
        if (s == null) {
            throw new IllegalStateException("upload " + u.uploadId() + " has no multipart upload");
        }
        while (size - s.sent() > partBytes) {
            s = send(u, s, partBytes);
        }
        if (size > s.sent() || s.parts().isEmpty()) {
            s = send(u, s, size - s.sent());
        }
        finish(u, s);
        forget(u);
        return uri(u);
    }

    private void finish(StagedUpload u, State s) {
        List<CompletedPart> parts = new ArrayList<>();
        for (Part p : s.parts()) {
            parts.add(CompletedPart.builder().partNumber(p.number()).eTag(p.etag()).build());
        }
        try {
            s3.completeMultipartUpload(b -> b.bucket(lake.bucket()).key(s.key()).uploadId(s.s3UploadId())
                    .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build()));
        } catch (SdkException e) {
            throw unavailable("cannot complete the multipart upload of " + uri(u), e);
        }
    }

    /** Aborts the upload's multipart upload (a hash mismatch, an expired upload): nothing of it stays in S3. */
    public void abort(StagedUpload u) {
        State s = load(u);
        if (s != null) {
            abortQuietly(s);
        }
        forget(u);
    }

    /**
     * Moves a landed object ingest refused out of the raw layer, to {@code <prefix>/_staging/rejected/<robot>/<name>}.
     *
     * @return the new object's URI
     */
    public String reject(StagedUpload u) {
        String to = lake.key(Staging.REJECTED + "/" + u.robotId() + "/" + u.landedName());
        try {
            s3.copyObject(b -> b.sourceBucket(lake.bucket()).sourceKey(key(u)).destinationBucket(lake.bucket())
                    .destinationKey(to));
            s3.deleteObject(b -> b.bucket(lake.bucket()).key(key(u)));
        } catch (SdkException e) {
            throw unavailable("cannot move " + uri(u) + " to " + to, e);
        }
        return "s3://" + lake.bucket() + "/" + to;
    }

    private void forget(StagedUpload u) {
        states.remove(u.uploadId());
        try {
            Files.deleteIfExists(stateFile(u));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private State send(StagedUpload u, State s, long n) {
        return send(u, s, n, staging.partFile(u), true);
    }

    private State send(StagedUpload u, State s, long n, Path source, boolean keep) {
        long from = s.sent();
        int number = s.parts().size() + 1;
        ByteBuffer buf = ByteBuffer.allocate((int) n);
        try (FileChannel fc = FileChannel.open(source, StandardOpenOption.READ)) {
            while (buf.hasRemaining()) {
                if (fc.read(buf, from + buf.position()) < 0) {
                    throw new IOException("the staging file ends at byte " + (from + buf.position()) + ", part "
                            + number + " needs bytes up to " + (from + n));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read part " + number + " of " + u.uploadId() + ": "
                    + e.getMessage(), e);
        }
        buf.flip();
        String etag;
        try {
            etag = s3.uploadPart(b -> b.bucket(lake.bucket()).key(s.key()).uploadId(s.s3UploadId())
                    .partNumber(number).contentLength(n), RequestBody.fromByteBuffer(buf)).eTag();
        } catch (SdkException e) {
            throw unavailable("cannot send part " + number + " of " + uri(u), e);
        }
        List<Part> parts = new ArrayList<>(s.parts());
        parts.add(new Part(number, etag, n));
        State next = new State(s.s3UploadId(), s.key(), parts);
        if (keep) {
            save(u, next);
        }
        return next;
    }

    private void abortQuietly(State s) {
        try {
            s3.abortMultipartUpload(b -> b.bucket(lake.bucket()).key(s.key()).uploadId(s.s3UploadId()));
        } catch (SdkException e) {
            // gone already, or the bucket's lifecycle rule will
        }
    }

    private static StorageUnavailableException unavailable(String what, SdkException e) {
        return new StorageUnavailableException(what + ": " + e.getMessage(), e);
    }

    @Override
    public void close() {
        s3.close();
    }
}
