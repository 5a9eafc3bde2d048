package io.flywheel.stream.topics;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A single-node Kafka (KRaft, broker and controller combined) in this JVM: the embedded default of
 * {@code flywheel stream run} and the broker of the tests. Starts in 5-20 s on 2 cores.
 */
public final class EmbeddedKafka implements AutoCloseable {
    private final KafkaClusterTestKit cluster;

    private EmbeddedKafka(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    /**
     * Starts a broker and creates the {@link FleetTopics} with {@code partitions} partitions each.
     *
     * @param dataDir where the broker keeps its logs; null for a temporary folder removed on close
     * @param partitions partitions per topic, &ge; 1
     * @throws IllegalStateException when the broker does not start
     */
    public static EmbeddedKafka start(Path dataDir, int partitions) {
        return start(dataDir, partitions, null);
    }

    /**
     * Starts a broker, its start-up output (the KRaft storage format's report, which Kafka prints to standard output)
     * appended to a log file, and creates the {@link FleetTopics} with {@code partitions} partitions each.
     *
     * @param dataDir where the broker keeps its logs; null for a temporary folder removed on close
     * @param partitions partitions per topic, &ge; 1
     * @param log the file the start-up output is appended to (its folder is created); null for standard error
     * @throws IllegalStateException when the broker does not start or the log file cannot be written
     */
    public static EmbeddedKafka start(Path dataDir, int partitions, Path log) {
        try {
            TestKitNodes.Builder nodes = new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1)
                    .setNumControllerNodes(1);
            if (dataDir != null) {
                nodes.setBaseDirectory(dataDir);
            }
            KafkaClusterTestKit c = new KafkaClusterTestKit.Builder(nodes.build())
                    .setConfigProp("offsets.topic.replication.factor", "1")
                    .setConfigProp("transaction.state.log.replication.factor", "1")
                    .setConfigProp("transaction.state.log.min.isr", "1")
                    .setConfigProp("group.initial.rebalance.delay.ms", "0")
                    .setDeleteOnClose(dataDir == null)
                    .build();
            // the KRaft formatter prints its metadata to standard output: keep a command's --json document clean
            java.io.PrintStream out = System.out;
            java.io.PrintStream to = System.err;
            if (log != null) {
                if (log.toAbsolutePath().getParent() != null) {
                    java.nio.file.Files.createDirectories(log.toAbsolutePath().getParent());
                }
                to = new java.io.PrintStream(java.nio.file.Files.newOutputStream(log,
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND), true,
                        java.nio.charset.StandardCharsets.UTF_8);
                to.println(java.time.Instant.now() + " embedded Kafka broker (KRaft, one node) starting");
            }
            synchronized (EmbeddedKafka.class) {
                System.setOut(to);
                try {
                    c.format();
                } finally {
                    System.setOut(out);
                    if (log != null) {
                        to.close();
                    }
                }
            }
            c.startup();
            c.waitForReadyBrokers();
            EmbeddedKafka k = new EmbeddedKafka(c);
            k.createTopics(FleetTopics.ALL, partitions);
            return k;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("the embedded Kafka broker did not start: " + e, e);
        }
    }

    /** @return the bootstrap servers, {@code HOST:PORT} */
    public String bootstrap() {
        return cluster.bootstrapServers();
    }

    /** Creates topics (replication 1) that do not exist yet. */
    public void createTopics(List<String> topics, int partitions) throws InterruptedException, ExecutionException {
        try (Admin admin = cluster.admin()) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> create = topics.stream().filter(t -> !existing.contains(t))
                    .map(t -> new NewTopic(t, partitions, (short) 1)).toList();
            try {
                admin.createTopics(create).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
