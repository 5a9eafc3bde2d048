package io.flywheel.serve.cache;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A read-only, S3-compatible endpoint on loopback that serves an {@link Origin} through a
 * {@link RangeCache}: each ranged GET is answered from the cache when the cache holds the whole
 * range, else from the origin (a miss; the cache is not filled by misses, only by
 * {@link Warmer}). Lance (and any S3 client, path-style, any credentials) opens the lake through it
 * as {@code s3://<any bucket>/...} with {@code aws_endpoint = endpoint()}.
 *
 * <p>Implements the S3 REST subset a reader needs: GET object (with {@code Range: bytes=a-b},
 * {@code bytes=a-} and {@code bytes=-n}), HEAD object, and ListObjectsV2 ({@code ?list-type=2},
 * delimiter and continuation ignored: one page with every key under the prefix). Writes answer
 * 405. Counts requests and bytes served from each side and can record every ranged read
 * ({@link #recording(boolean)}) so tests can compare what a reader touched with a warm list.
 */
public final class CacheServer implements AutoCloseable {
    /** One ranged read served. @param key object key @param range bytes served @param hit from the cache */
    public record Read(String key, ByteRange range, boolean hit) {}

    /** Counters since start. Bytes of GET bodies only (metadata requests are counted as requests). */
    public record Stats(long requests, long hitBytes, long missBytes, long hitReads, long missReads) {
        /** @return hit bytes / all bytes served, 1 when nothing was served */
        public double hitRatio() {
            long all = hitBytes + missBytes;
            return all == 0 ? 1.0 : (double) hitBytes / all;
        }
    }

    private final RangeCache cache;
    private final Origin origin;
    private final HttpServer server;
    private final ExecutorService pool;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong hitBytes = new AtomicLong();
    private final AtomicLong missBytes = new AtomicLong();
    private final AtomicLong hitReads = new AtomicLong();
    private final AtomicLong missReads = new AtomicLong();
    private final List<Read> reads = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean recording;

    private CacheServer(RangeCache cache, Origin origin) throws IOException {
        this.cache = cache;
        this.origin = origin;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        this.pool = Executors.newFixedThreadPool(8, r -> {
            Thread t = new Thread(r, "cache-server");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(pool);
        server.createContext("/", this::handle);
    }

    /**
     * Starts a server on a free loopback port.
     *
     * @throws IOException when no port can be bound
     */
    public static CacheServer start(RangeCache cache, Origin origin) throws IOException {
        CacheServer s = new CacheServer(cache, origin);
        s.server.start();
        return s;
    }

    /** @return {@code http://127.0.0.1:<port>} */
    public String endpoint() {
        return "http://" + server.getAddress().getAddress().getHostAddress() + ":" + server.getAddress().getPort();
    }

    /** @return the counters so far */
    public Stats stats() {
        return new Stats(requests.get(), hitBytes.get(), missBytes.get(), hitReads.get(), missReads.get());
    }

    /** Starts (clearing) or stops recording ranged reads. */
    public void recording(boolean on) {
        if (on) {
            reads.clear();
        }
        recording = on;
    }

    /** @return the reads recorded since {@link #recording(boolean)} was turned on */
    public List<Read> reads() {
        synchronized (reads) {
            return List.copyOf(reads);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }

    private void handle(HttpExchange ex) throws IOException {
        requests.incrementAndGet();
        try (ex) {
            URI u = ex.getRequestURI();
            String path = u.getRawPath();
            String[] parts = path.substring(1).split("/", 2);
            String key = parts.length < 2 ? "" : decode(parts[1]);
            Map<String, String> q = query(u.getRawQuery());
            String method = ex.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                send(ex, 405, error("MethodNotAllowed", "the cache endpoint is read-only"));
                return;
            }
            if (key.isEmpty() && q.containsKey("list-type")) {
                list(ex, q.getOrDefault("prefix", ""));
                return;
            }
            if (key.isEmpty()) {
                send(ex, 400, error("InvalidRequest", "no key in " + path));
                return;
            }
            long size;
            try {
                size = cache.size(key);
                if (size < 0) {
                    size = origin.size(key);
                }
            } catch (NoSuchFileException e) {
                send(ex, 404, error("NoSuchKey", key));
                return;
            }
            ex.getResponseHeaders().add("ETag", "\"" + Long.toHexString(key.hashCode()) + "-" + size + "\"");
            ex.getResponseHeaders().add("Last-Modified", "Thu, 01 Jan 2015 00:00:00 GMT");
            ex.getResponseHeaders().add("Accept-Ranges", "bytes");
            if (method.equals("HEAD")) {
                ex.getResponseHeaders().add("Content-Length", Long.toString(size));
                ex.sendResponseHeaders(200, -1);
                return;
            }
            String rh = ex.getRequestHeaders().getFirst("Range");
            ByteRange r = rh == null ? new ByteRange(0, size) : parseRange(rh, size);
            if (r == null) {
                ex.getResponseHeaders().add("Content-Range", "bytes */" + size);
                send(ex, 416, error("InvalidRange", rh + " of " + size + " bytes"));
                return;
            }
            byte[] body = cache.get(key, r);
            boolean hit = body != null;
            if (!hit) {
                body = origin.read(key, r);
                missBytes.addAndGet(body.length);
                missReads.incrementAndGet();
            } else {
                hitBytes.addAndGet(body.length);
                hitReads.incrementAndGet();
            }
            if (recording) {
                reads.add(new Read(key, r, hit));
            }
            if (rh != null) {
                ex.getResponseHeaders().add("Content-Range", "bytes " + r.start() + "-" + (r.end() - 1) + "/" + size);
            }
            ex.sendResponseHeaders(rh != null ? 206 : 200, body.length == 0 ? -1 : body.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(body);
            }
        } catch (IOException | RuntimeException e) {
            try {
                send(ex, 500, error("InternalError", String.valueOf(e.getMessage())));
            } catch (IOException | RuntimeException ignored) {
                // headers already sent: the client sees a short body and retries or fails
            }
        }
    }

    private void list(HttpExchange ex, String prefix) throws IOException {
        StringBuilder b = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                + "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>cache</Name><Prefix>")
                .append(xml(prefix)).append("</Prefix><IsTruncated>false</IsTruncated>");
        List<Origin.Entry> entries = origin.list(prefix);
        b.append("<KeyCount>").append(entries.size()).append("</KeyCount>");
        for (Origin.Entry e : entries) {
            b.append("<Contents><Key>").append(xml(e.key())).append("</Key><LastModified>2015-01-01T00:00:00.000Z"
                    + "</LastModified><ETag>\"").append(Long.toHexString(e.key().hashCode())).append("-")
                    .append(e.size()).append("\"</ETag><Size>").append(e.size())
                    .append("</Size><StorageClass>STANDARD</StorageClass></Contents>");
        }
        b.append("</ListBucketResult>");
        ex.getResponseHeaders().add("Content-Type", "application/xml");
        send(ex, 200, b.toString());
    }

    static ByteRange parseRange(String h, long size) {
        String s = h.strip();
        if (!s.startsWith("bytes=") || s.contains(",")) {
            return null;
        }
        String spec = s.substring(6);
        int dash = spec.indexOf('-');
        if (dash < 0) {
            return null;
        }
        try {
            String a = spec.substring(0, dash);
            String z = spec.substring(dash + 1);
            if (a.isEmpty()) {
                long n = Long.parseLong(z);
                return new ByteRange(Math.max(0, size - n), size);
            }
            long start = Long.parseLong(a);
            long end = z.isEmpty() ? size : Math.min(size, Long.parseLong(z) + 1);
            return start >= size && size > 0 || end < start ? null : new ByteRange(start, end);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static void send(HttpExchange ex, int code, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        if (ex.getRequestMethod().equals("HEAD")) {
            // a HEAD answer has no body: the JDK server wants -1 (it warns about a length) and takes the header as set
            ex.getResponseHeaders().set("Content-Length", Integer.toString(b.length));
            ex.sendResponseHeaders(code, -1);
            return;
        }
        ex.sendResponseHeaders(code, b.length == 0 ? -1 : b.length);
        if (b.length > 0) {
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        }
    }

    private static String error(String code, String message) {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code + "</Code><Message>" + xml(message)
                + "</Message></Error>";
    }

    private static String xml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> q = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return q;
        }
        for (String kv : raw.split("&")) {
            int eq = kv.indexOf('=');
            q.put(decode(eq < 0 ? kv : kv.substring(0, eq)), eq < 0 ? "" : decode(kv.substring(eq + 1)));
        }
        return q;
    }
}
