package io.flywheel.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import io.flywheel.console.ConsoleOptions;
import io.flywheel.console.ConsoleServer;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code flywheel serve LAKE}: the web console and HTTP JSON API over a lake, until Ctrl-C. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Start the web console (episodes, frames, alignment, embedding map, training sets) and its HTTP"
                + " JSON API (/api/...) over a lake. Read-only; no authentication: keep --host on this machine"
                + " (127.0.0.1) unless the network is trusted. Ctrl-C or SIGTERM stops it (exit 0) and it"
                + " prints how many requests it answered.")
final class ServeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    LakeLocation lake;

    @Option(names = "--port", description = "TCP port; 0 picks a free one (default: ${DEFAULT-VALUE})")
    int port = 8080;

    @Option(names = "--host", description = "interface to listen on (default: ${DEFAULT-VALUE})")
    String host = "127.0.0.1";

    @Option(names = "--max-requests", paramLabel = "N",
            description = "stop after answering N requests (for scripted checks; default: run until Ctrl-C)")
    long maxRequests;

    @Option(names = "--json", description = "machine-readable output: one JSON line when listening, one when stopped")
    boolean json;

    @Override
    public Integer call() throws Exception {
        Usage.require(spec, port >= 0 && port <= 65535, "--port must be in 0..65535, got " + port);
        Usage.require(spec, maxRequests >= 0, "--max-requests must be >= 0, got " + maxRequests);
        ConsoleOptions options = Usage.check(spec, null, () -> ConsoleOptions.builder().host(host).port(port).build());
        CountDownLatch stop = new CountDownLatch(1);
        try (Lake l = lake.open(); ConsoleServer server = ConsoleServer.start(l, options)) {
            if (maxRequests > 0) {
                server.onRequest(() -> {
                    if (server.requestsServed() >= maxRequests) {
                        stop.countDown();
                    }
                });
            }
            Thread hook = new Thread(stop::countDown, "flywheel-serve-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            Signals.stopOn(stop);
            Map<String, Object> started = new LinkedHashMap<>();
            started.put("url", server.uri().toString());
            started.put("lake", l.location());
            started.put("port", server.port());
            if (json) {
                System.out.println(Json.MAPPER.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT)
                        .writeValueAsString(started));
            } else {
                System.out.println("Flywheel console for " + l.location() + " at " + server.uri() + " (Ctrl-C stops it)");
                if (!host.equals("127.0.0.1") && !host.equals("localhost") && !host.equals("::1")) {
                    System.out.println("warning: listening on " + host + " without authentication: anyone who can reach"
                            + " this port can read the lake");
                }
            }
            System.out.flush();
            stop.await();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // no signal handler here: the JVM is already stopping
            }
            // let the last response finish before stopping the connector
            Thread.sleep(100);
            Map<String, Object> done = new LinkedHashMap<>();
            done.put("requests", server.requestsServed());
            done.put("errors", server.errorsServed());
            if (json) {
                System.out.println(Json.MAPPER.writer().without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT)
                        .writeValueAsString(done));
            } else {
                System.out.println("console stopped: " + server.requestsServed() + " request(s) answered, "
                        + server.errorsServed() + " with an error status");
            }
        }
        return 0;
    }
}
