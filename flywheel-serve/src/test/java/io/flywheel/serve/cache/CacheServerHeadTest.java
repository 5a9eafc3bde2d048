package io.flywheel.serve.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HEAD requests to the cache endpoint: the answer names the object's size (or the error body's) in Content-Length and
 * sends no body, and the JDK server logs no "sendResponseHeaders: being invoked with a content length for a HEAD
 * request" warning (the quickstart printed eight of them on standard error).
 */
class CacheServerHeadTest {

    @Test
    void headOfAPresentAndAMissingKeyAnswersWithoutJdkWarnings(@TempDir Path tmp) throws Exception {
        Path origin = Files.createDirectories(tmp.resolve("origin"));
        Files.write(origin.resolve("data.bin"), new byte[1234]);
        List<LogRecord> warnings = new ArrayList<>();
        Logger jdk = Logger.getLogger("com.sun.net.httpserver");
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    synchronized (warnings) {
                        warnings.add(r);
                    }
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        jdk.addHandler(capture);
        try (CacheServer s = CacheServer.start(RangeCache.open(tmp.resolve("cache")), new LocalOrigin(origin))) {
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<byte[]> present = http.send(head(s.endpoint() + "/cache/data.bin"),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, present.statusCode());
            assertEquals("1234", present.headers().firstValue("Content-Length").orElse(""));
            assertEquals(0, present.body().length);
            HttpResponse<byte[]> missing = http.send(head(s.endpoint() + "/cache/nope.bin"),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(404, missing.statusCode());
            assertEquals(0, missing.body().length, "a HEAD answer has no body");
            long declared = Long.parseLong(missing.headers().firstValue("Content-Length").orElse("-1"));
            assertTrue(declared > 0, "the error body's length, as a GET would get it: " + declared);
            HttpResponse<String> get = http.send(HttpRequest.newBuilder(URI.create(s.endpoint() + "/cache/nope.bin"))
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(404, get.statusCode());
            assertEquals(declared, get.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
            assertTrue(get.body().contains("<Code>NoSuchKey</Code>"), get.body());
        } finally {
            jdk.removeHandler(capture);
        }
        synchronized (warnings) {
            assertEquals(List.of(), warnings.stream().map(LogRecord::getMessage).toList());
        }
    }

    private static HttpRequest head(String uri) {
        return HttpRequest.newBuilder(URI.create(uri)).method("HEAD", HttpRequest.BodyPublishers.noBody()).build();
    }
}
