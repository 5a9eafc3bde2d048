package io.flywheel.lake;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;

import io.flywheel.error.StorageUnavailableException;
import io.flywheel.raw.RawChannel;
import io.flywheel.raw.RawStorage;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The raw files of a lake on S3: {@code s3://bucket/key} URIs read by HTTP byte range ({@code GetObject} with
 * {@code Range: bytes=a-b}, RFC 9110 section 14), the size from one {@code HeadObject}; {@code file:} URIs as on a
 * local lake. One client for the lake, made on first use with the lake's storage options, closed with the lake.
 */
final class S3RawStorage implements RawStorage, AutoCloseable {
    private final String lakeUri;
    private final StorageConfig storage;
    private S3Client client;

    S3RawStorage(String lakeUri, StorageConfig storage) {
        this.lakeUri = lakeUri;
        this.storage = storage;
    }

    private synchronized S3Client client() {
        if (client == null) {
            client = S3Location.parse(lakeUri).client(storage, 16);
        }
        return client;
    }

    @Override
    public RawChannel open(String uri) throws IOException {
        if (!uri.startsWith("s3://")) {
            return RawStorage.local().open(uri);
        }
        S3Location at = S3Location.parse(uri);
        String key = at.prefix().isEmpty() ? "" : at.prefix().substring(0, at.prefix().length() - 1);
        S3Client s3 = client();
        long size;
        try {
            size = s3.headObject(HeadObjectRequest.builder().bucket(at.bucket()).key(key).build()).contentLength();
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
                try {
                    byte[] b = s3.getObjectAsBytes(GetObjectRequest.builder().bucket(at.bucket()).key(key)
                            .range("bytes=" + position + "-" + (position + n - 1)).build()).asByteArray();
                    dst.put(b, 0, Math.min(b.length, n));
                    return Math.min(b.length, n);
                } catch (SdkException e) {
                    throw new StorageUnavailableException(uri + ": cannot read bytes " + position + ".." + (position + n)
                            + ": " + e.getMessage(), e);
                }
            }

            @Override
            public void close() {
                // the lake's client stays open
            }
        };
    }

    @Override
    public synchronized void close() {
        if (client != null) {
            client.close();
        }
    }
}
