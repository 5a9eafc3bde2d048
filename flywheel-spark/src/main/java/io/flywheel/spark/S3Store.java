package io.flywheel.spark;

import java.io.IOException;
import java.io.Serializable;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.flywheel.error.BadInputException;
import io.flywheel.error.StorageUnavailableException;
import io.flywheel.raw.RawChannel;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Recordings in an S3 bucket (or an S3-compatible server), read by HTTP byte range ({@code GetObject} with
 * {@code Range: bytes=a-b}), listed with {@code ListObjectsV2}. Path-style requests; one client per JVM and settings.
 *
 * <p>The settings travel with the job (endpoint, region); the credentials never do: each JVM (driver, executors)
 * reads them from its environment, {@code AWS_ACCESS_KEY_ID} and {@code AWS_SECRET_ACCESS_KEY} (or the system
 * properties {@code aws.accessKeyId} and {@code aws.secretAccessKey}).
 */
public final class S3Store {
    /** Bytes fetched per request for small positioned reads (record headers of a bag); larger reads go direct. */
    static final int BLOCK = 1 << 20;

    /**
     * Where the store is.
     *
     * @param endpoint S3 endpoint URL, or null for AWS
     * @param region region; null: us-east-1
     */
    public record Settings(String endpoint, String region) implements Serializable {}

    private static final Map<Settings, S3Client> CLIENTS = new ConcurrentHashMap<>();

    private final S3Client s3;

    private S3Store(S3Client s3) {
        this.s3 = s3;
    }

    /**
     * @return the store of these settings, the credentials from this JVM's environment
     * @throws BadInputException when {@code AWS_ACCESS_KEY_ID} or {@code AWS_SECRET_ACCESS_KEY} is not set
     */
    static S3Store of(Settings s) {
        return new S3Store(CLIENTS.computeIfAbsent(s, S3Store::client));
    }

    private static S3Client client(Settings s) {
        // the AWS SDK's own names: system properties first, then the environment
        String keyId = System.getProperty("aws.accessKeyId", System.getenv("AWS_ACCESS_KEY_ID"));
        String secret = System.getProperty("aws.secretAccessKey", System.getenv("AWS_SECRET_ACCESS_KEY"));
        if (keyId == null || secret == null) {
            throw new BadInputException("s3:// inputs need AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the"
                    + " environment of the driver and of every executor");
        }
        var b = S3Client.builder().region(Region.of(s.region() == null ? "us-east-1" : s.region()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(keyId, secret)))
                .forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(16)
                        .connectionTimeout(Duration.ofSeconds(10)).socketTimeout(Duration.ofSeconds(60)));
        if (s.endpoint() != null && !s.endpoint().isBlank()) {
            String ep = s.endpoint().endsWith("/") ? s.endpoint().substring(0, s.endpoint().length() - 1) : s.endpoint();
            try {
                b.endpointOverride(URI.create(ep));
            } catch (IllegalArgumentException e) {
                throw new BadInputException("S3 endpoint '" + s.endpoint() + "' is not a URI: " + e.getMessage(), e);
            }
        }
        return b.build();
    }

    /** An {@code s3://bucket/key} URI taken apart. */
    record Location(String bucket, String key) {
        static Location parse(String uri) {
            if (!uri.startsWith("s3://")) {
                throw new BadInputException(uri + ": expected s3://bucket/key");
            }
            String rest = uri.substring("s3://".length());
            int slash = rest.indexOf('/');
            String bucket = slash < 0 ? rest : rest.substring(0, slash);
            if (bucket.isEmpty()) {
                throw new BadInputException(uri + ": expected s3://bucket/key, the bucket is empty");
            }
            return new Location(bucket, slash < 0 ? "" : rest.substring(slash + 1));
        }

        String uri() {
            return "s3://" + bucket + "/" + key;
        }
    }

    /** One object: its URI and size in bytes. */
    record Entry(String uri, long size) implements Serializable {}

    /**
     * @param prefix {@code s3://bucket/prefix}; every object whose key starts with it
     * @return the objects, by key
     */
    List<Entry> list(String prefix) throws IOException {
        Location at = Location.parse(prefix);
        List<Entry> out = new ArrayList<>();
        String token = null;
        try {
            do {
                ListObjectsV2Request.Builder rq = ListObjectsV2Request.builder().bucket(at.bucket()).prefix(at.key());
                if (token != null) {
                    rq.continuationToken(token);
                }
                ListObjectsV2Response r = s3.listObjectsV2(rq.build());
                for (S3Object o : r.contents()) {
                    if (o.key().endsWith("/")) {
                        continue; // a folder marker, no file
                    }
                    out.add(new Entry("s3://" + at.bucket() + "/" + o.key(), o.size()));
                }
                token = Boolean.TRUE.equals(r.isTruncated()) ? r.nextContinuationToken() : null;
            } while (token != null);
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                throw new NoSuchFileException(prefix, null, "no such bucket");
            }
            throw new StorageUnavailableException(prefix + ": cannot list: " + e.getMessage(), e);
        } catch (SdkException e) {
            throw new StorageUnavailableException(prefix + ": cannot list: " + e.getMessage(), e);
        }
        out.sort(java.util.Comparator.comparing(Entry::uri));
        return out;
    }

    /** @return the first {@code n} bytes of the object (fewer when it is shorter) */
    byte[] head(String uri, long size, int n) throws IOException {
        if (size == 0) {
            return new byte[0];
        }
        Location at = Location.parse(uri);
        try {
            return s3.getObjectAsBytes(GetObjectRequest.builder().bucket(at.bucket()).key(at.key())
                    .range("bytes=0-" + (Math.min(n, size) - 1)).build()).asByteArray();
        } catch (SdkException e) {
            throw new StorageUnavailableException(uri + ": cannot read its first bytes: " + e.getMessage(), e);
        }
    }

    /** Copies the object to {@code to} (its folders made), through a temporary file beside it. */
    void download(String uri, Path to) throws IOException {
        Location at = Location.parse(uri);
        Files.createDirectories(to.getParent());
        Path tmp = to.resolveSibling(to.getFileName() + ".part");
        try (var in = s3.getObject(GetObjectRequest.builder().bucket(at.bucket()).key(at.key()).build())) {
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
        } catch (NoSuchKeyException e) {
            throw new NoSuchFileException(uri, null, "no such object in the bucket");
        } catch (SdkException e) {
            throw new StorageUnavailableException(uri + ": cannot download: " + e.getMessage(), e);
        }
        Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * @return positioned reads of the object: its size from one {@code HeadObject}; a read shorter than
     *     {@link #BLOCK} fetches (and keeps) the block of {@link #BLOCK} bytes around it, a longer one is fetched as it is
     * @throws NoSuchFileException when there is no such object
     */
    RawChannel open(String uri) throws IOException {
        Location at = Location.parse(uri);
        long size;
        try {
            size = s3.headObject(HeadObjectRequest.builder().bucket(at.bucket()).key(at.key()).build()).contentLength();
        } catch (NoSuchKeyException e) {
            throw new NoSuchFileException(uri, null, "no such object in the bucket");
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                throw new NoSuchFileException(uri, null, "no such object in the bucket");
            }
            throw new StorageUnavailableException(uri + ": " + e.getMessage(), e);
        } catch (SdkException e) {
            throw new StorageUnavailableException(uri + ": " + e.getMessage(), e);
        }
        return new RawChannel() {
            private byte[] block;
            private long blockStart = -1;

            @Override
            public long size() {
                return size;
            }

            @Override
            public int read(ByteBuffer dst, long position) {
                if (position >= size) {
                    return -1;
                }
                int n = (int) Math.min(dst.remaining(), size - position);
                if (n == 0) {
                    return 0;
                }
                if (block != null && position >= blockStart && position + n <= blockStart + block.length) {
                    dst.put(block, (int) (position - blockStart), n);
                    return n;
                }
                if (n >= BLOCK) {
                    byte[] b = get(position, n);
                    dst.put(b, 0, Math.min(b.length, n));
                    return Math.min(b.length, n);
                }
                block = get(position, (int) Math.min(BLOCK, size - position));
                blockStart = position;
                int k = Math.min(n, block.length);
                dst.put(block, 0, k);
                return k;
            }

            private byte[] get(long position, int n) {
                try {
                    return s3.getObjectAsBytes(GetObjectRequest.builder().bucket(at.bucket()).key(at.key())
                            .range("bytes=" + position + "-" + (position + n - 1)).build()).asByteArray();
                } catch (SdkException e) {
                    throw new StorageUnavailableException(uri + ": cannot read bytes " + position + ".."
                            + (position + n) + ": " + e.getMessage(), e);
                }
            }

            @Override
            public void close() {
                block = null; // the JVM's client stays open
            }
        };
    }
}
