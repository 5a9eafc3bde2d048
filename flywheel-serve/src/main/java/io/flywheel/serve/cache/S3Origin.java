package io.flywheel.serve.cache;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;

import io.flywheel.lake.S3Location;
import io.flywheel.lake.StorageConfig;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.exception.SdkServiceException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * An {@link Origin} on an S3-compatible bucket prefix, through the AWS SDK for Java v2
 * ({@code software.amazon.awssdk:s3}: Signature Version 4 signing, retries with backoff, error
 * parsing, ListObjectsV2 pagination) over its Apache HTTP client (pooled keep-alive connections,
 * sized for parallel warms). Path-style addressing ({@code endpoint/bucket/key}), as S3-compatible
 * servers (MinIO, s3proxy, Ceph) expect. Uses the lake's {@link StorageConfig} keys
 * ({@code aws_endpoint}, {@code aws_region}, {@code aws_access_key_id},
 * {@code aws_secret_access_key}; the storage config already merged flywheel.yaml and the
 * {@code AWS_*} environment variables). Only GetObject (ranged), HeadObject and ListObjectsV2 are
 * used; listings skip folder markers (keys ending in {@code /}), as {@link LocalOrigin} lists files
 * only. Checksums are only computed and validated where the S3 API requires them (ranged GETs have
 * no whole-object checksum to validate). Thread-safe; close it to release the connections.
 */
public final class S3Origin implements Origin {
    /** Connections kept per origin: the warmer's threads (16 by default) plus readers. */
    private static final int MAX_CONNECTIONS = 64;

    private final String bucket;
    private final String prefix;
    private final S3Client s3;

    /**
     * @param location {@code s3://bucket/prefix}
     * @param storage the lake's storage options (endpoint defaults to AWS's regional endpoint)
     * @throws io.flywheel.error.BadInputException when the location is not an s3:// URI, the endpoint is not a
     *     URI or credentials are missing
     */
    public S3Origin(String location, StorageConfig storage) {
        S3Location at = S3Location.parse(location);
        bucket = at.bucket();
        prefix = at.prefix();
        s3 = at.client(storage, MAX_CONNECTIONS);
    }

    @Override
    public String describe() {
        return "s3://" + bucket + "/" + prefix;
    }

    @Override
    public long size(String key) throws IOException {
        try {
            Long n = s3.headObject(r -> r.bucket(bucket).key(prefix + key)).contentLength();
            if (n == null) {
                throw new IOException(describe() + key + ": HEAD without Content-Length");
            }
            return n;
        } catch (SdkException e) {
            throw failure(e, key, "HEAD");
        }
    }

    @Override
    public byte[] read(String key, ByteRange range) throws IOException {
        if (range.length() == 0) {
            return new byte[0];
        }
        String what = "GET bytes " + range;
        ResponseBytes<GetObjectResponse> r;
        try {
            r = s3.getObjectAsBytes(g -> g.bucket(bucket).key(prefix + key)
                    .range("bytes=" + range.start() + "-" + (range.end() - 1)));
        } catch (SdkException e) {
            throw failure(e, key, what);
        }
        byte[] b = r.asByteArrayUnsafe();
        if (r.response().contentRange() == null && b.length >= range.end()) { // server ignored the Range header
            return java.util.Arrays.copyOfRange(b, (int) range.start(), (int) range.end());
        }
        if (b.length != range.length()) {
            throw new IOException(describe() + key + ": asked bytes [" + range + "), got " + b.length + " bytes");
        }
        return b;
    }

    @Override
    public List<Entry> list(String keyPrefix) throws IOException {
        List<Entry> out = new ArrayList<>();
        try {
            for (ListObjectsV2Response page : s3.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(bucket)
                    .prefix(prefix + keyPrefix).build())) {
                for (S3Object c : page.contents()) {
                    if (c.key().endsWith("/")) {
                        continue; // a folder marker (console- or filesystem-made), not a file: as LocalOrigin lists
                    }
                    out.add(new Entry(c.key().substring(prefix.length()), c.size()));
                }
            }
        } catch (SdkException e) {
            throw failure(e, keyPrefix, "LIST");
        }
        out.sort((a, b) -> a.key().compareTo(b.key()));
        return out;
    }

    /** An SDK failure as the IOException the {@link Origin} contract names: bucket/prefix, key and what was asked. */
    private IOException failure(SdkException e, String key, String what) {
        if (e instanceof SdkServiceException s) {
            if (s.statusCode() == 404 && !what.equals("LIST")) {
                NoSuchFileException n = new NoSuchFileException(describe() + key, null, what + " answered HTTP 404");
                n.initCause(e);
                return n;
            }
            return new IOException(describe() + key + ": " + what + " answered HTTP " + s.statusCode() + ": "
                    + e.getMessage(), e);
        }
        if (e instanceof AbortedException) {
            Thread.currentThread().interrupt();
            InterruptedIOException i = new InterruptedIOException(describe() + key + ": " + what + " interrupted");
            i.initCause(e);
            return i;
        }
        return new IOException(describe() + key + ": " + what + " failed: " + e.getMessage(), e);
    }

    @Override
    public void close() {
        s3.close();
    }
}
