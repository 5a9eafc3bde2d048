package io.flywheel.console;

import java.io.IOException;
import java.io.InputStream;
import java.net.BindException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.flywheel.align.AlignMethod;
import io.flywheel.align.MissPolicy;
import io.flywheel.lake.Lake;

/**
 * The web console and its HTTP JSON API over one lake, on Eclipse Jetty 12 (core handlers, no
 * servlets). GET only. Pages are HTML rendered on the server ({@link Pages}) with one small script and
 * style sheet; the API answers JSON (snake_case keys; integers wider than 53 bits stay numbers).
 *
 * <h2>API</h2>
 * <ul>
 *   <li>{@code /api/summary}</li>
 *   <li>{@code /api/episodes?offset&limit&sort&order=asc|desc&robot&task&scene&operator&outcome&quality&q&flag}</li>
 *   <li>{@code /api/episodes/ID}, {@code /api/episodes/ID/frames?offset&limit},
 *       {@code /api/episodes/ID/frames/N/image?camera&thumb} (JPEG or PNG)</li>
 *   <li>{@code /api/episodes/ID/align?stream&method&tolerance_ms&offset_ms&on_miss&from&count}</li>
 *   <li>{@code /api/map?trainset}, {@code /api/map.png?trainset}</li>
 *   <li>{@code /api/trainsets}, {@code /api/trainsets/TAG}, {@code /api/trainset-diff?from&to},
 *       {@code /api/trainset-diff.png?from&to}</li>
 *   <li>{@code /api/fleet}: robots, last heartbeats, alerts, uploads in progress</li>
 * </ul>
 * Errors: 400 for a bad parameter, 403 for a raw file not registered in the lake, 404 for an unknown
 * path, episode, frame or tag, 405 for another method than GET/HEAD, 415/422 for data the console cannot
 * show; the body is {@code {"error": message, "status": code}}. No request names a file: the static
 * assets are a fixed list read from the class path, and images are found through the lake's locators.
 */
public final class ConsoleServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
    private static final Map<String, String> STATIC = Map.of("console.js", "text/javascript; charset=utf-8",
            "console.css", "text/css; charset=utf-8");

    private final Server server;
    private final ConsoleApi api;
    private final Pages pages;
    private final EvalPages evalPages;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final String host;
    private volatile Runnable onRequest = () -> {};

    private final Lake lake;

    private ConsoleServer(Lake lake, ConsoleOptions options) {
        this.lake = lake;
        this.api = new ConsoleApi(lake, options.mapMaxPoints());
        this.pages = new Pages(api);
        this.evalPages = new EvalPages(lake);
        this.host = options.host();
        QueuedThreadPool pool = new QueuedThreadPool(options.threads(), 2);
        pool.setName("console");
        pool.setDaemon(true);
        server = new Server(pool);
        ServerConnector c = new ServerConnector(server, 1, 1);
        c.setHost(options.host());
        c.setPort(options.port());
        server.addConnector(c);
        ErrorHandler eh = new ErrorHandler();
        eh.setShowStacks(false);
        server.setErrorHandler(eh);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                serve(request, response, callback);
                return true;
            }
        });
    }

    /**
     * Starts the console.
     *
     * @param lake an open lake; the caller closes it after {@link #close()}
     * @param options host, port, threads
     * @return the running server
     * @throws IOException when the port is in use or the host cannot be bound (naming both)
     */
    public static ConsoleServer start(Lake lake, ConsoleOptions options) throws IOException {
        ConsoleServer s = new ConsoleServer(lake, options);
        try {
            s.server.start();
        } catch (Exception e) {
            s.close();
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof BindException b) {
                    throw new IOException("cannot listen on " + options.host() + ":" + options.port() + ": "
                            + (b.getMessage() == null ? "address in use" : b.getMessage().toLowerCase(Locale.ROOT)), e);
                }
            }
            throw new IOException("cannot start the console on " + options.host() + ":" + options.port() + ": "
                    + e.getMessage(), e);
        }
        return s;
    }

    /** @return the port listened on (the one picked when the options said 0) */
    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** @return {@code http://host:port/} */
    public URI uri() {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return URI.create("http://" + h + ":" + port() + "/");
    }

    /** @return the API behind the console (for callers that want the same values without HTTP) */
    public ConsoleApi api() {
        return api;
    }

    /** @return requests answered so far */
    public long requestsServed() {
        return requests.get();
    }

    /** @return requests answered with a 4xx or 5xx status so far */
    public long errorsServed() {
        return errors.get();
    }

    /** @param r run after each answered request (e.g. to stop after a number of requests) */
    public void onRequest(Runnable r) {
        this.onRequest = r == null ? () -> {} : r;
    }

    /** Blocks until the server stops. */
    public void join() throws InterruptedException {
        server.join();
    }

    /** Stops the server (idempotent); the lake stays open. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the console: " + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ routing

    private void serve(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        boolean apiPath = path.startsWith("/api/") || path.equals("/api");
        try {
            String method = request.getMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
                throw new ApiException(405, "method " + method + " is not allowed; the console is read-only (GET)");
            }
            Fields params = queryParameters(request);
            lake.refresh(); // each request reads the newest lake commit (labels, enrich batches as they land)
            List<String> seg = segments(path);
            if (apiPath) {
                api(seg.subList(1, seg.size()), params, response, callback);
            } else {
                page(seg, params, request, response, callback);
            }
        } catch (ApiException e) {
            fail(e.status(), e.getMessage(), apiPath, response, callback);
        } catch (io.flywheel.error.NotFoundException e) {
            fail(404, e.getMessage(), apiPath, response, callback);
        } catch (io.flywheel.error.BadInputException e) {
            fail(400, e.getMessage(), apiPath, response, callback);
        } catch (Exception e) {
            // the cause names lake paths and internal filters: it goes to the server's log, not to the client
            System.err.println("flywheel console: " + request.getMethod() + " " + path + ": " + e);
            fail(500, "internal error answering " + path + " (the server's log has the cause)", apiPath, response,
                    callback);
        } finally {
            requests.incrementAndGet();
            onRequest.run();
        }
    }

    /** @return the path's segments, percent-decoded; 400 for an empty, dot or slash segment */
    static List<String> segments(String path) {
        if (path == null || !path.startsWith("/")) {
            throw ApiException.badRequest("bad path");
        }
        if (path.equals("/")) {
            return List.of();
        }
        String[] parts = path.substring(1).split("/", -1);
        for (int i = 0; i < parts.length; i++) {
            String p;
            try {
                p = org.eclipse.jetty.util.URIUtil.decodePath(parts[i]);
            } catch (RuntimeException e) {
                throw ApiException.badRequest("bad path: cannot decode '" + parts[i] + "'");
            }
            if (p.isEmpty() && parts.length > 1 || p.equals(".") || p.equals("..") || p.contains("/")
                    || p.contains("\\")) {
                throw ApiException.badRequest("bad path: empty, dot or slash segment in '" + path + "'");
            }
            parts[i] = p;
        }
        return List.of(parts);
    }

    private void api(List<String> s, Fields p, Response response, Callback cb) throws Exception {
        int n = s.size();
        if (n == 1 && s.get(0).equals("summary")) {
            json(api.summary(), response, cb);
        } else if (n == 1 && s.get(0).equals("episodes")) {
            json(api.episodes(episodeQuery(p)), response, cb);
        } else if (n >= 2 && s.get(0).equals("episodes")) {
            String id = id(s.get(1), "episode id");
            if (n == 2) {
                json(api.episode(id), response, cb);
            } else if (n == 3 && s.get(2).equals("frames")) {
                json(api.frames(id, longParam(p, "offset", 0, 0, Long.MAX_VALUE / 2),
                        (int) longParam(p, "limit", 500, 1, ConsoleApi.MAX_PAGE)), response, cb);
            } else if (n == 5 && s.get(2).equals("frames") && s.get(4).equals("image")) {
                int frame = (int) parseLong(s.get(3), "frame index", 0, Integer.MAX_VALUE);
                ConsoleApi.Image img = api.image(id, frame, (int) longParam(p, "camera", 0, 0, 64),
                        (int) longParam(p, "thumb", 0, 0, 4096));
                bytes(img.bytes(), img.contentType(), "public, max-age=3600", response, cb);
            } else if (n == 3 && s.get(2).equals("align")) {
                json(api.align(id, alignRequest(p)), response, cb);
            } else {
                throw ApiException.notFound("no API path /api/" + String.join("/", s));
            }
        } else if (n == 1 && s.get(0).equals("map")) {
            json(api.map(optionalId(p, "trainset")), response, cb);
        } else if (n == 1 && s.get(0).equals("map.png")) {
            java.io.ByteArrayOutputStream bo = new java.io.ByteArrayOutputStream();
            javax.imageio.ImageIO.write(api.embeddingMap(optionalId(p, "trainset")).render(), "png", bo);
            bytes(bo.toByteArray(), "image/png", "no-cache", response, cb);
        } else if (n == 1 && s.get(0).equals("trainsets")) {
            json(api.trainsets(), response, cb);
        } else if (n == 1 && s.get(0).equals("fleet")) {
            json(api.fleet(), response, cb);
        } else if (n == 1 && s.get(0).equals("labels")) {
            json(api.labels((int) longParam(p, "limit", 100, 1, ConsoleApi.MAX_PAGE)), response, cb);
        } else if (n == 2 && s.get(0).equals("trainsets")) {
            json(api.trainset(id(s.get(1), "training-set tag"), (int) longParam(p, "limit", 200, 1, 100_000)),
                    response, cb);
        } else if (n == 1 && s.get(0).equals("trainset-diff")) {
            json(api.diff(requiredId(p, "from"), requiredId(p, "to")), response, cb);
        } else if (n == 2 && s.get(0).equals("eval")) {
            evalApi(s.get(1), p, response, cb);
        } else if (n == 1 && s.get(0).equals("trainset-diff.png")) {
            bytes(api.diffPng(requiredId(p, "from"), requiredId(p, "to")), "image/png", "no-cache", response, cb);
        } else {
            throw ApiException.notFound("no API path /api/" + String.join("/", s));
        }
    }

    private void page(List<String> s, Fields p, Request request, Response response, Callback cb) throws Exception {
        int n = s.size();
        if (n == 0) {
            Response.sendRedirect(request, response, cb, "/episodes");
            return;
        }
        String first = s.get(0);
        if (n == 1 && first.equals("favicon.ico")) {
            response.setStatus(204);
            cb.succeeded();
            return;
        }
        if (n == 2 && first.equals("static") && STATIC.containsKey(s.get(1))) {
            try (InputStream in = ConsoleServer.class.getResourceAsStream("static/" + s.get(1))) {
                if (in == null) {
                    throw ApiException.notFound("missing asset " + s.get(1));
                }
                bytes(in.readAllBytes(), STATIC.get(s.get(1)), "no-cache", response, cb);
            }
            return;
        }
        String html;
        if (n == 1 && first.equals("episodes")) {
            html = pages.episodes(episodeQuery(p));
        } else if (n == 2 && first.equals("episodes")) {
            html = pages.episode(id(s.get(1), "episode id"));
        } else if (n == 3 && first.equals("episodes") && s.get(2).equals("align")) {
            html = pages.align(id(s.get(1), "episode id"));
        } else if (n == 1 && first.equals("map")) {
            html = pages.map();
        } else if (n == 1 && first.equals("trainsets")) {
            html = pages.trainsets();
        } else if (n == 1 && first.equals("fleet")) {
            html = pages.fleet();
        } else if (n == 1 && first.equals("labels")) {
            html = pages.labels();
        } else if (n == 1 && first.equals("eval")) {
            html = pages.eval(evalPages.body(optionalId(p, "run"), p.getValue("by"), optionalId(p, "against")));
        } else {
            throw ApiException.notFound("no page " + Request.getPathInContext(request));
        }
        bytes(html.getBytes(StandardCharsets.UTF_8), "text/html; charset=utf-8", "no-cache", response, cb);
    }

    // ------------------------------------------------------------------ parameters

    /** The parameters of an episode listing: its filters and these. */
    private static final java.util.Set<String> LISTING_PARAMETERS = java.util.Set.of("offset", "limit", "sort",
            "order", "q", "flag");

    /**
     * @return the query string's parameters, percent-decoded as UTF-8
     * @throws ApiException 400 for a query string that is not UTF-8, or a name or value with a control character
     *     (NUL included)
     */
    static Fields queryParameters(Request request) {
        Fields p;
        try {
            p = Request.extractQueryParameters(request, StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            throw ApiException.badRequest("the query string is not percent-encoded UTF-8");
        }
        for (Fields.Field f : p) {
            checkText(f.getName(), "parameter name");
            for (String v : f.getValues()) {
                checkText(v, "parameter '" + f.getName() + "'");
            }
        }
        return p;
    }

    private static void checkText(String s, String what) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\uFFFD') {
                throw ApiException.badRequest(what + ": not valid UTF-8");
            }
            if (Character.isISOControl(c)) {
                throw ApiException.badRequest(what + ": control character U+" + String.format("%04X", (int) c)
                        + " at character " + i);
            }
        }
    }

    static EpisodeQuery episodeQuery(Fields p) {
        for (String name : p.getNames()) {
            if (!ConsoleApi.FILTERS.containsKey(name) && !LISTING_PARAMETERS.contains(name)) {
                throw ApiException.badRequest("unknown parameter '" + name + "'; filters: "
                        + String.join(", ", ConsoleApi.FILTERS.keySet()) + "; also: offset, limit, sort, order, q, flag");
            }
        }
        Map<String, String> filters = new LinkedHashMap<>();
        for (String k : ConsoleApi.FILTERS.keySet()) {
            String v = p.getValue(k);
            if (v != null && !v.isEmpty()) {
                filters.put(k, v);
            }
        }
        String order = p.getValue("order");
        if (order != null && !order.equals("asc") && !order.equals("desc")) {
            throw ApiException.badRequest("order must be asc or desc, got '" + order + "'");
        }
        String sort = p.getValue("sort");
        return new EpisodeQuery(longParam(p, "offset", 0, 0, Long.MAX_VALUE / 2),
                (int) longParam(p, "limit", 50, 1, ConsoleApi.MAX_PAGE), sort == null || sort.isEmpty() ? null : sort,
                "desc".equals(order), filters, p.getValue("q"), p.getValue("flag"));
    }

    static AlignRequest alignRequest(Fields p) {
        String stream = p.getValue("stream");
        if (stream != null && (stream.isEmpty() || !ConsoleApi.TOPIC.matcher(stream).matches())) {
            throw ApiException.badRequest("stream: '" + stream + "' is not a topic name");
        }
        String m = p.getValue("method");
        AlignMethod method;
        try {
            method = m == null ? AlignMethod.NEAREST : AlignMethod.valueOf(m.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("method must be nearest, asof or interpolate, got '" + m + "'");
        }
        String miss = p.getValue("on_miss");
        if (miss != null && !miss.equals("flag") && !miss.equals("drop")) {
            throw ApiException.badRequest("on_miss must be flag or drop, got '" + miss + "'");
        }
        return new AlignRequest(stream, method, Math.round(doubleParam(p, "tolerance_ms", 20) * 1e6),
                Math.round(doubleParam(p, "offset_ms", 0) * 1e6), "drop".equals(miss) ? MissPolicy.DROP_FRAME
                        : MissPolicy.FLAG, longParam(p, "from", 0, 0, Integer.MAX_VALUE),
                (int) longParam(p, "count", 60, 1, 5000));
    }

    static long longParam(Fields p, String name, long def, long min, long max) {
        String v = p.getValue(name);
        return v == null || v.isEmpty() ? def : parseLong(v, name, min, max);
    }

    static long parseLong(String v, String name, long min, long max) {
        long x;
        try {
            x = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be an integer, got '" + v + "'");
        }
        if (x < min || x > max) {
            throw ApiException.badRequest(name + " must be in " + min + ".." + max + ", got " + x);
        }
        return x;
    }

    static double doubleParam(Fields p, String name, double def) {
        String v = p.getValue(name);
        if (v == null || v.isEmpty()) {
            return def;
        }
        try {
            double d = Double.parseDouble(v);
            if (!Double.isFinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be a number, got '" + v + "'");
        }
    }

    static String id(String v, String what) {
        if (!ConsoleApi.ID.matcher(v).matches()) {
            throw ApiException.badRequest(what + " '" + v + "' is not valid: expected 1-200 letters, digits or ._:@+-");
        }
        return v;
    }

    /** {@code /api/eval/runs|report|compare|heatmap.png} ({@link EvalPages}). */
    private void evalApi(String what, Fields p, Response response, Callback cb) throws Exception {
        switch (what) {
            case "runs" -> json(evalPages.runs(), response, cb);
            case "report" -> json(evalPages.report(requiredId(p, "run"), evalBy(p)), response, cb);
            case "compare" -> json(evalPages.compare(requiredId(p, "a"), requiredId(p, "b"), evalBy(p), evalQ(p)),
                    response, cb);
            case "heatmap.png" -> {
                String run = optionalId(p, "run");
                bytes(evalPages.heatmap(run, run == null ? requiredId(p, "a") : null, run == null ? requiredId(p, "b")
                        : null, evalBy(p)), "image/png", "no-cache", response, cb);
            }
            default -> throw ApiException.notFound("no API path /api/eval/" + what);
        }
    }

    /** @return {@code by} as given (null: absent, the default); 400 when given empty or with an empty dimension */
    private static String evalBy(Fields p) {
        String v = p.getValue("by");
        if (v != null && (v.isBlank() || java.util.Arrays.stream(v.split(",", -1)).anyMatch(String::isBlank))) {
            throw ApiException.badRequest("parameter 'by' has an empty dimension ('" + v + "'); give dimensions,"
                    + " comma separated, of task, object, lighting, scene, robot, or leave it out");
        }
        return v;
    }

    /** @return {@code q}, the false discovery rate, in (0, 1) (default 0.05); 400 otherwise */
    private static double evalQ(Fields p) {
        String v = p.getValue("q");
        if (v == null) {
            return 0.05;
        }
        double q;
        try {
            q = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            q = Double.NaN;
        }
        if (!(q > 0 && q < 1)) {
            throw ApiException.badRequest("parameter 'q' must be a number in (0, 1), got '" + v + "'");
        }
        return q;
    }

    private static String optionalId(Fields p, String name) {
        String v = p.getValue(name);
        return v == null || v.isEmpty() ? null : id(v, name);
    }

    private static String requiredId(Fields p, String name) {
        String v = p.getValue(name);
        if (v == null || v.isEmpty()) {
            throw ApiException.badRequest("parameter '" + name + "' is required");
        }
        return id(v, name);
    }

    // ------------------------------------------------------------------ responses

    private static void json(Object value, Response response, Callback cb) throws IOException {
        bytes(JSON.writeValueAsBytes(value), "application/json; charset=utf-8", "no-cache", response, cb);
    }

    private static void bytes(byte[] body, String type, String cache, Response response, Callback cb) {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, cache);
        response.getHeaders().put("X-Content-Type-Options", "nosniff");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), cb);
    }

    private void fail(int status, String message, boolean apiPath, Response response, Callback cb) {
        errors.incrementAndGet();
        if (response.isCommitted()) {
            cb.failed(new IOException(message));
            return;
        }
        response.reset();
        byte[] body;
        String type;
        if (apiPath) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("error", message);
            m.put("status", status);
            try {
                body = JSON.writeValueAsBytes(m);
            } catch (IOException e) {
                body = ("{\"status\":" + status + "}").getBytes(StandardCharsets.UTF_8);
            }
            type = "application/json; charset=utf-8";
        } else {
            body = pages.error(status, message).getBytes(StandardCharsets.UTF_8);
            type = "text/html; charset=utf-8";
        }
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), cb);
    }
}
