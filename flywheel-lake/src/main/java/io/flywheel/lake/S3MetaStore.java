package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;

import io.flywheel.error.BadInputException;
import io.flywheel.error.StorageUnavailableException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * {@link MetaStore} under an S3 prefix ({@code s3://bucket/prefix/_lake/}), through the AWS SDK for Java v2 with
 * path-style addressing (S3-compatible servers expect it). {@link #putIfAbsent} is a PUT with
 * {@code If-None-Match: *}: S3 (since 2024) creates the object only when no object has the key and answers 412
 * Precondition Failed otherwise. That is all the lake's commit protocol needs from the store; a server that
 * accepts the header but checks it apart from the write (s3proxy checks with a HEAD, then PUTs) cannot guarantee
 * it under a race, which README states.
 */
final class S3MetaStore implements MetaStore {
    private final String bucket;
    private final String prefix;
    private final S3Client s3;

    /**
     * @param location {@code s3://bucket/prefix} of the metadata folder
     * @param storage the lake's storage options (endpoint, region, credentials)
     * @throws BadInputException when the location, endpoint or credentials are unusable
     */
    S3MetaStore(String location, StorageConfig storage) {
        S3Location at = S3Location.parse(location);
        bucket = at.bucket();
        prefix = at.prefix();
        s3 = at.client(storage, 16);
    }

    @Override
    public byte[] read(String key) {
        try {
            return s3.getObjectAsBytes(g -> g.bucket(bucket).key(prefix + key)).asByteArray();
        } catch (NoSuchKeyException e) {
            return null;
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                return null;
            }
            throw failure("GET", key, e);
        } catch (SdkException e) {
            throw failure("GET", key, e);
        }
    }

    @Override
    public boolean putIfAbsent(String key, byte[] content) {
        try {
            s3.putObject(r -> r.bucket(bucket).key(prefix + key).ifNoneMatch("*"), RequestBody.fromBytes(content));
            return true;
        } catch (S3Exception e) {
            if (e.statusCode() == 412 || e.statusCode() == 409) { // 409: a concurrent conditional PUT of the key
                return false;
            }
            throw failure("conditional PUT", key, e);
        } catch (SdkException e) {
            throw failure("conditional PUT", key, e);
        }
    }

    @Override
    public void put(String key, byte[] content) {
        try {
            s3.putObject(r -> r.bucket(bucket).key(prefix + key), RequestBody.fromBytes(content));
        } catch (SdkException e) {
            throw failure("PUT", key, e);
        }
    }

    @Override
    public void delete(String key) {
        try {
            s3.deleteObject(r -> r.bucket(bucket).key(prefix + key));
        } catch (SdkException e) {
            throw failure("DELETE", key, e);
        }
    }

    @Override
    public List<String> list(String keyPrefix, String startAfter) {
        List<String> out = new ArrayList<>();
        try {
            ListObjectsV2Request.Builder req = ListObjectsV2Request.builder().bucket(bucket).prefix(prefix + keyPrefix);
            if (startAfter != null) {
                req.startAfter(prefix + startAfter);
            }
            for (ListObjectsV2Response page : s3.listObjectsV2Paginator(req.build())) {
                for (S3Object o : page.contents()) {
                    if (!o.key().endsWith("/")) {
                        out.add(o.key().substring(prefix.length()));
                    }
                }
            }
        } catch (SdkException e) {
            throw failure("LIST", keyPrefix, e);
        }
        out.sort(null);
        return out;
    }

    @Override
    public String describe(String key) {
        return "s3://" + bucket + "/" + prefix + key;
    }

    @Override
    public void close() {
        s3.close();
    }

    private StorageUnavailableException failure(String what, String key, SdkException e) {
        return new StorageUnavailableException(what + " " + describe(key) + " failed: " + e.getMessage(), e);
    }
}
