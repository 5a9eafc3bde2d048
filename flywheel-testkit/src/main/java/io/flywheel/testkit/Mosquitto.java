package io.flywheel.testkit;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's {@code mosquitto} broker as a real process for a test class: a generated config (a free port on
 * 127.0.0.1, anonymous clients, no persistence, queues large enough for the tests), started in the foreground,
 * waited for until its port takes connections, stopped by PID. Without the binary the test is skipped with a message,
 * and fails under {@code CI=true} ({@code .ci/run} installs it).
 */
public final class Mosquitto implements AutoCloseable {
    private static final List<String> BINARIES = List.of("/usr/sbin/mosquitto", "/usr/bin/mosquitto");

    private final Process process;
    private final int port;
    private final Path log;

    private Mosquitto(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * Starts a broker with its config and log in {@code dir}.
     *
     * @param dir a scratch folder
     * @return the running broker
     */
    public static Mosquitto start(Path dir) throws IOException, InterruptedException {
        String bin = BINARIES.stream().filter(b -> Files.isExecutable(Path.of(b))).findFirst().orElse(null);
        if (bin == null) {
            String why = "mosquitto is not installed (apt-get install -y mosquitto)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(why);
            }
            Assumptions.abort(why + ": skipped");
        }
        Files.createDirectories(dir);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path conf = dir.resolve("mosquitto.conf");
        Files.writeString(conf, String.join("\n",
                "listener " + port + " 127.0.0.1",
                "allow_anonymous true",
                "persistence false",
                "max_queued_messages 100000",
                "max_inflight_messages 0",
                "log_dest stdout",
                "log_type error",
                "log_type warning",
                "log_type notice",
                "") );
        Path log = dir.resolve("mosquitto.log");
        Process p = new ProcessBuilder(bin, "-c", conf.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                break;
            } catch (IOException e) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    Assertions.fail("mosquitto did not listen on port " + port + ": " + Files.readString(log));
                }
                Thread.sleep(20);
            }
        }
        return new Mosquitto(p, port, log);
    }

    /** @return its TCP port on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** @return {@code tcp://127.0.0.1:port} */
    public String url() {
        return "tcp://127.0.0.1:" + port;
    }

    /** @return its process id */
    public long pid() {
        return process.pid();
    }

    /** @return what it logged so far */
    public String log() throws IOException {
        return Files.readString(log);
    }

    /** Stops it by PID (SIGTERM, then SIGKILL after 5 s). */
    @Override
    public void close() {
        ProcessHandle.of(process.pid()).ifPresent(ProcessHandle::destroy);
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
