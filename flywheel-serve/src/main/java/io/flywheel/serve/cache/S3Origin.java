package io.flywheel.serve.cache;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import io.flywheel.lake.StorageConfig;

/**
 * An {@link Origin} on an S3-compatible bucket prefix, path-style, over HTTP(S) with AWS Signature
 * Version 4 (AWS "Signature Version 4 signing process": canonical request, string to sign,
 * HMAC-SHA256 key derivation). Uses the lake's {@link StorageConfig} keys ({@code aws_endpoint},
 * {@code aws_region}, {@code aws_access_key_id}, {@code aws_secret_access_key}). Only GET object
 * (ranged), HEAD object and ListObjectsV2 are used.
 */
public final class S3Origin implements Origin {
    private static final DateTimeFormatter AMZ = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");
    private static final String EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    private final String endpoint;
    private final String bucket;
    private final String prefix;
    private final String region;
    private final String keyId;
    private final String secret;
    private final HttpClient http;

    /**
     * @param location {@code s3://bucket/prefix}
     * @param storage the lake's storage options (endpoint defaults to AWS's regional endpoint)
     * @throws IllegalArgumentException when the location is not an s3:// URI or credentials are missing
     */
    public S3Origin(String location, StorageConfig storage) {
        if (!location.startsWith("s3://")) {
            throw new IllegalArgumentException("not an s3:// location: " + location);
        }
        String rest = location.substring(5);
        int slash = rest.indexOf('/');
        bucket = slash < 0 ? rest : rest.substring(0, slash);
        String p = slash < 0 ? "" : rest.substring(slash + 1);
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        prefix = p.isEmpty() ? "" : p + "/";
        Map<String, String> o = storage.options();
        region = o.getOrDefault(StorageConfig.REGION, "us-east-1");
        String ep = o.getOrDefault(StorageConfig.ENDPOINT, "https://s3." + region + ".amazonaws.com");
        endpoint = ep.endsWith("/") ? ep.substring(0, ep.length() - 1) : ep;
        keyId = o.get(StorageConfig.ACCESS_KEY_ID);
        secret = o.get(StorageConfig.SECRET_ACCESS_KEY);
        if (keyId == null || secret == null) {
            throw new IllegalArgumentException("s3 origin " + location + ": aws_access_key_id and aws_secret_access_key"
                    + " are needed (storage options, flywheel.yaml or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)");
        }
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @Override
    public String describe() {
        return "s3://" + bucket + "/" + prefix;
    }

    @Override
    public long size(String key) throws IOException {
        HttpResponse<byte[]> r = send("HEAD", objectPath(key), Map.of(), Map.of());
        if (r.statusCode() == 404) {
            throw new NoSuchFileException(describe() + key);
        }
        check(r, key, "HEAD");
        return r.headers().firstValueAsLong("content-length").orElseThrow(() ->
                new IOException(describe() + key + ": HEAD without Content-Length"));
    }

    @Override
    public byte[] read(String key, ByteRange range) throws IOException {
        if (range.length() == 0) {
            return new byte[0];
        }
        HttpResponse<byte[]> r = send("GET", objectPath(key), Map.of(),
                Map.of("range", "bytes=" + range.start() + "-" + (range.end() - 1)));
        if (r.statusCode() == 404) {
            throw new NoSuchFileException(describe() + key);
        }
        check(r, key, "GET bytes " + range);
        byte[] b = r.body();
        if (r.statusCode() == 200 && b.length >= range.end()) { // server ignored the Range header
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
        String token = null;
        do {
            Map<String, String> q = new TreeMap<>();
            q.put("list-type", "2");
            q.put("prefix", prefix + keyPrefix);
            if (token != null) {
                q.put("continuation-token", token);
            }
            HttpResponse<byte[]> r = send("GET", "/" + bucket, q, Map.of());
            check(r, keyPrefix, "LIST");
            try {
                DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
                f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
                Document d = f.newDocumentBuilder().parse(new ByteArrayInputStream(r.body()));
                NodeList contents = d.getElementsByTagName("Contents");
                for (int i = 0; i < contents.getLength(); i++) {
                    Element c = (Element) contents.item(i);
                    String k = text(c, "Key");
                    out.add(new Entry(k.substring(prefix.length()), Long.parseLong(text(c, "Size"))));
                }
                token = "true".equals(text(d.getDocumentElement(), "IsTruncated"))
                        ? text(d.getDocumentElement(), "NextContinuationToken") : null;
            } catch (Exception e) {
                throw new IOException(describe() + keyPrefix + ": unreadable ListObjectsV2 answer: " + e.getMessage(), e);
            }
        } while (token != null && !token.isEmpty());
        out.sort((a, b) -> a.key().compareTo(b.key()));
        return out;
    }

    private static String text(Element e, String tag) {
        NodeList l = e.getElementsByTagName(tag);
        return l.getLength() == 0 ? "" : l.item(0).getTextContent();
    }

    private String objectPath(String key) {
        StringBuilder b = new StringBuilder("/").append(bucket);
        for (String seg : (prefix + key).split("/", -1)) {
            b.append('/').append(encode(seg));
        }
        return b.toString();
    }

    private void check(HttpResponse<byte[]> r, String key, String what) throws IOException {
        if (r.statusCode() / 100 != 2) {
            String body = new String(r.body(), StandardCharsets.UTF_8);
            throw new IOException(describe() + key + ": " + what + " answered HTTP " + r.statusCode() + ": "
                    + body.substring(0, Math.min(300, body.length())));
        }
    }

    private HttpResponse<byte[]> send(String method, String path, Map<String, String> query, Map<String, String> extra)
            throws IOException {
        URI base = URI.create(endpoint);
        String host = base.getHost() + (base.getPort() > 0 ? ":" + base.getPort() : "");
        String amzDate = ZonedDateTime.now(ZoneOffset.UTC).format(AMZ);
        String day = amzDate.substring(0, 8);
        StringBuilder qs = new StringBuilder();
        for (Map.Entry<String, String> e : new TreeMap<>(query).entrySet()) {
            qs.append(qs.length() == 0 ? "" : "&").append(encode(e.getKey())).append('=').append(encode(e.getValue()));
        }
        TreeMap<String, String> headers = new TreeMap<>(extra);
        headers.put("host", host);
        headers.put("x-amz-content-sha256", EMPTY_SHA);
        headers.put("x-amz-date", amzDate);
        String signed = String.join(";", headers.keySet());
        StringBuilder canon = new StringBuilder(method).append('\n').append(path).append('\n').append(qs).append('\n');
        headers.forEach((k, v) -> canon.append(k).append(':').append(v.strip()).append('\n'));
        canon.append('\n').append(signed).append('\n').append(EMPTY_SHA);
        String scope = day + "/" + region + "/s3/aws4_request";
        String toSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex(sha256(canon.toString()));
        byte[] k = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), day);
        k = hmac(k, region);
        k = hmac(k, "s3");
        k = hmac(k, "aws4_request");
        String auth = "AWS4-HMAC-SHA256 Credential=" + keyId + "/" + scope + ", SignedHeaders=" + signed + ", Signature="
                + hex(hmac(k, toSign));
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(endpoint + path + (qs.length() > 0 ? "?" + qs : "")))
                .timeout(Duration.ofSeconds(60)).method(method, HttpRequest.BodyPublishers.noBody())
                .header("authorization", auth);
        headers.forEach((h, v) -> {
            if (!h.equals("host")) {
                rb.header(h, v);
            }
        });
        try {
            return http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(describe() + path + ": interrupted", e);
        }
    }

    /** RFC 3986 unreserved characters kept, everything else percent-encoded (as SigV4 asks). */
    static String encode(String s) {
        StringBuilder b = new StringBuilder();
        for (byte c : s.getBytes(StandardCharsets.UTF_8)) {
            char ch = (char) (c & 0xFF);
            if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'
                    || ch == '.' || ch == '~') {
                b.append(ch);
            } else {
                b.append('%').append(String.format("%02X", c & 0xFF));
            }
        }
        return b.toString();
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(key, "HmacSHA256"));
            return m.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
