package io.flywheel.lake;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import io.flywheel.error.BadInputException;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * An {@code s3://bucket/prefix} location, and the S3 client that a lake's storage options give for it: what the
 * lake's commit points and the serving cache's origin both read and write through.
 *
 * @param uri the location as given
 * @param bucket the bucket
 * @param prefix the key prefix, empty or ending in {@code /}
 */
public record S3Location(String uri, String bucket, String prefix) {
    /**
     * @throws BadInputException when {@code uri} does not start with {@code s3://}
     */
    public static S3Location parse(String uri) {
        if (!uri.startsWith("s3://")) {
            throw new BadInputException("not an s3:// location: " + uri);
        }
        String rest = uri.substring(5);
        int slash = rest.indexOf('/');
        String p = slash < 0 ? "" : rest.substring(slash + 1);
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return new S3Location(uri, slash < 0 ? rest : rest.substring(0, slash), p.isEmpty() ? "" : p + "/");
    }

    /** @return the object key of {@code name} under the prefix */
    public String key(String name) {
        return prefix + name;
    }

    /**
     * @param storage endpoint ({@code aws_endpoint}; AWS's regional endpoint when absent), region (default
     *     us-east-1) and static credentials
     * @param maxConnections the HTTP connection pool's size
     * @return a client that signs with SigV4, addresses buckets by path, and computes and checks checksums only
     *     where the S3 API requires them (S3-compatible servers reject the newer checksum headers)
     * @throws BadInputException naming the location when the credentials are missing or the endpoint is no URI
     */
    public S3Client client(StorageConfig storage, int maxConnections) {
        Map<String, String> o = storage.options();
        String keyId = o.get(StorageConfig.ACCESS_KEY_ID);
        String secret = o.get(StorageConfig.SECRET_ACCESS_KEY);
        if (keyId == null || secret == null) {
            throw new BadInputException(uri + ": aws_access_key_id and aws_secret_access_key are needed (storage"
                    + " options, flywheel.yaml or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)");
        }
        var b = S3Client.builder().region(Region.of(o.getOrDefault(StorageConfig.REGION, "us-east-1")))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(keyId, secret)))
                .forcePathStyle(true)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(maxConnections)
                        .connectionTimeout(Duration.ofSeconds(10)).socketTimeout(Duration.ofSeconds(60)));
        String ep = o.get(StorageConfig.ENDPOINT);
        if (ep != null && !ep.isBlank()) {
            try {
                b.endpointOverride(URI.create(ep.endsWith("/") ? ep.substring(0, ep.length() - 1) : ep));
            } catch (IllegalArgumentException e) {
                throw new BadInputException(uri + ": aws_endpoint '" + ep + "' is not a URI: " + e.getMessage(), e);
            }
        }
        return b.build();
    }
}
