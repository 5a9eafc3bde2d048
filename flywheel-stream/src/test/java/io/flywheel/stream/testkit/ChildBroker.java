package io.flywheel.stream.testkit;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;

import io.flywheel.stream.topics.FleetTopics;

/**
 * A single-node Kafka (KRaft, broker and controller combined) in a child JVM, so that it can be killed with SIGKILL
 * and started again on the same log folder and port. Its output goes to {@code broker-N.log} in its folder.
 */
public final class ChildBroker implements AutoCloseable {
    private final Path dir;
    private final Path props;
    private final String bootstrap;
    private Process process;
    private int starts;

    private ChildBroker(Path dir, Path props, String bootstrap) {
        this.dir = dir;
        this.props = props;
        this.bootstrap = bootstrap;
    }

    /**
     * Formats a log folder in {@code dir}, starts the broker, waits until it answers and creates the
     * {@link FleetTopics} with {@code partitions} partitions each.
     *
     * @throws IllegalStateException when the format fails or the broker does not answer within 90 s
     */
    public static ChildBroker start(Path dir, int partitions) throws Exception {
        Files.createDirectories(dir);
        int brokerPort = freePort();
        int controllerPort = freePort();
        Path props = dir.resolve("server.properties");
        Files.writeString(props, String.join("\n",
                "process.roles=broker,controller", "node.id=1",
                "controller.quorum.voters=1@localhost:" + controllerPort,
                "listeners=PLAINTEXT://localhost:" + brokerPort + ",CONTROLLER://localhost:" + controllerPort,
                "advertised.listeners=PLAINTEXT://localhost:" + brokerPort,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=PLAINTEXT", "log.dirs=" + dir.resolve("kafka-logs"),
                "offsets.topic.replication.factor=1", "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1", "group.initial.rebalance.delay.ms=0", ""));
        ChildBroker b = new ChildBroker(dir, props, "localhost:" + brokerPort);
        Process format = StreamFixture.childJvm(dir, "format", 256, "kafka.tools.StorageTool",
                List.of("format", "-t", Uuid.randomUuid().toString(), "-c", props.toString()));
        if (!format.waitFor(60, TimeUnit.SECONDS) || format.exitValue() != 0) {
            format.destroyForcibly();
            throw new IllegalStateException("kafka storage format failed, see " + dir.resolve("format.log"));
        }
        b.restart(Duration.ofSeconds(90));
        try (Admin admin = b.admin()) {
            Set<String> have = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            admin.createTopics(FleetTopics.ALL.stream().filter(t -> !have.contains(t))
                    .map(n -> new NewTopic(n, partitions, (short) 1)).toList()).all().get(60, TimeUnit.SECONDS);
        }
        return b;
    }

    /** @return {@code localhost:PORT} */
    public String bootstrap() {
        return bootstrap;
    }

    /** @return the child JVM's process id */
    public long pid() {
        return process.pid();
    }

    /** Kills the broker with SIGKILL and waits until it is gone: no shutdown, no flush of its logs. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(); // SIGKILL on Unix
    }

    /**
     * Starts the broker (again) on the same log folder and port and waits until it answers.
     *
     * @return the seconds from the start to its first answer
     * @throws IllegalStateException when it does not answer within {@code max}
     */
    public double restart(Duration max) throws Exception {
        long t = System.nanoTime();
        starts++;
        process = StreamFixture.childJvm(dir, "broker-" + starts, 512, "kafka.Kafka", List.of(props.toString()));
        try (Admin admin = admin()) {
            admin.listTopics().names().get(max.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the broker did not answer within " + max.toSeconds() + " s, see "
                    + dir.resolve("broker-" + starts + ".log"), e);
        }
        return (System.nanoTime() - t) / 1e9;
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            kill();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
