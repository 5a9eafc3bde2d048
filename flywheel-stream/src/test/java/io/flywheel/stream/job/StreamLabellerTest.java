package io.flywheel.stream.job;

import static io.flywheel.stream.testkit.StreamFixture.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.testkit.StreamFixture;
import io.flywheel.stream.topics.EmbeddedKafka;
import io.flywheel.stream.topics.FleetEventPublisher;
import io.flywheel.stream.topics.FleetTopics;

/**
 * The plain-consumer labeller on one in-JVM broker shared by the class. The tests share the fleet topics: each
 * asserts on its own episodes (ids carry the seed) and its own lake.
 */
class StreamLabellerTest {
    private static EmbeddedKafka kafka;
    private static final LabelRules RULES = StreamFixture.rules(1, null);

    @BeforeAll
    static void broker() {
        kafka = EmbeddedKafka.start(null, 2);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        kafka.close();
    }

    private static Thread start(StreamLabeller l) {
        Thread t = new Thread(l::run, "labeller");
        t.start();
        return t;
    }

    @Test
    void killedMidStreamAndRestartedLabelsEveryEpisodeOnceAsTheTruth(@TempDir Path dir) throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 120_000_000_000L;
        List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(40, 4, t0, 5, 19);
        String group = "kill-test";
        try (Lake lake = Lake.init(dir.resolve("lake"));
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            LabellerOptions opts = LabellerOptions.builder(kafka.bootstrap()).group(group).rules(RULES)
                    .commitInterval(Duration.ofMillis(300)).idleness(Duration.ofMillis(500)).build();
            // first half published, labeller runs, is stopped without a clean shutdown of its state
            StreamFixture.publishAll(pub, eps.subList(0, 20));
            StreamLabeller first = new StreamLabeller(lake, opts, l -> { });
            Thread t1 = start(first);
            waitFor(() -> LakeLabelSink.history(lake).size() >= 5, Duration.ofSeconds(60), "first labels");
            t1.interrupt(); // as a kill: the run loop stops between polls; open episodes are lost from memory
            t1.join(10_000);
            first.close();
            int afterKill = LakeLabelSink.history(lake).size();
            assertTrue(afterKill >= 5 && afterKill <= 20, "labels before the kill: " + afterKill);
            StreamFixture.publishAll(pub, eps.subList(20, 40));
            StreamLabeller second = new StreamLabeller(lake, opts, l -> { });
            Thread t2 = start(second);
            waitFor(() -> LakeLabelSink.history(lake).size() >= 40, Duration.ofSeconds(60), "all 40 labels");
            Thread.sleep(1000); // a further commit interval: nothing more may appear
            second.stop();
            t2.join(10_000);
            LabellerStats st = second.stats();
            second.close();

            List<LabelHistoryRow> hist = LakeLabelSink.history(lake);
            assertEquals(40, hist.size(), "one history entry per episode");
            Map<String, LabelHistoryRow> byEpisode = new HashMap<>();
            hist.forEach(r -> byEpisode.put(r.episodeId(), r));
            assertEquals(40, byEpisode.size());
            for (LiveEpisodes.Episode e : eps) {
                LabelHistoryRow r = byEpisode.get(e.episodeId());
                assertEquals(e.truth().outcome.label(), r.label(), e.episodeId() + " " + e.truth());
                assertEquals(e.truth().rule, r.rule(), e.episodeId());
                assertEquals("label-rules-1", r.rulesVersion());
                assertEquals(group, r.consumerGroup());
            }
            assertTrue(st.replayed() > 0, "the restart read records of labelled episodes again: " + st);
        }
    }

    @Test
    void badInputGoesToTheDeadLetterTopicAndTheLabellerKeepsRunning(@TempDir Path dir) throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 60_000_000_000L;
        List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(3, 1, t0, 4, 7);
        List<String> log = new ArrayList<>();
        try (Lake lake = Lake.init(dir.resolve("lake"));
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            pub.send(FleetTopics.OBSERVATIONS, "robot-00", new byte[] {(byte) 0xff, 0x01, 0x02}).get();
            pub.publish(ObservationSummary.newBuilder().setRobotId("robot-00").setEpisodeId("ghost-1")
                    .setTimeNs(t0).setSamplePeriodNs(100_000_000L).addGripperOpening(0.5f).addGripperForceN(0f).build()).get();
            StreamFixture.publishAll(pub, eps);
            LabellerOptions opts = LabellerOptions.builder(kafka.bootstrap()).group("bad-input").rules(RULES)
                    .commitInterval(Duration.ofMillis(300)).idleness(Duration.ofMillis(300))
                    .log(line -> { synchronized (log) { log.add(line); } }).build();
            StreamLabeller l = new StreamLabeller(lake, opts, x -> { });
            Thread t = start(l);
            List<String> ids = eps.stream().map(LiveEpisodes.Episode::episodeId).toList();
            waitFor(() -> LakeLabelSink.history(lake).stream().filter(r -> ids.contains(r.episodeId())).count() >= 3,
                    Duration.ofSeconds(60), "3 labels");
            // a late event for a labelled episode
            pub.publish(Alert.newBuilder().setRobotId("robot-00").setEpisodeId(eps.get(0).episodeId())
                    .setKind(Alert.Kind.E_STOP).setTimeNs(t0 + 1_000_000_000L).build()).get();
            waitFor(() -> { synchronized (log) { return log.stream().anyMatch(s -> s.contains("(late)")); } },
                    Duration.ofSeconds(30), "the late record");
            l.stop();
            t.join(10_000);
            LabellerStats st = l.stats();
            l.close();
            assertEquals(1, st.malformed(), st.toString());
            assertEquals(1, st.unknownEpisode(), st.toString());
            assertEquals(1, st.late(), st.toString());
            for (LiveEpisodes.Episode e : eps) {
                List<LabelHistoryRow> rows = LakeLabelSink.history(lake).stream()
                        .filter(r -> r.episodeId().equals(e.episodeId())).toList();
                assertEquals(1, rows.size(), e.episodeId());
                assertEquals(e.truth().outcome.label(), rows.get(0).label(), e.episodeId());
            }
            synchronized (log) {
                assertTrue(log.stream().anyMatch(s -> s.startsWith("dead letter (malformed): fleet.observations partition ")
                        && s.contains(" offset ")), log.toString());
            }
            Map<String, Integer> reasons = new HashMap<>();
            Properties c = new Properties();
            c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
            c.put(ConsumerConfig.GROUP_ID_CONFIG, "dlq-reader");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            try (KafkaConsumer<byte[], byte[]> dlq = new KafkaConsumer<>(c)) {
                dlq.subscribe(List.of(FleetTopics.DEAD_LETTERS));
                long until = System.nanoTime() + 20_000_000_000L;
                while (reasons.values().stream().mapToInt(Integer::intValue).sum() < 3 && System.nanoTime() < until) {
                    for (ConsumerRecord<byte[], byte[]> r : dlq.poll(Duration.ofMillis(200))) {
                        String why = new String(r.headers().lastHeader(FleetTopics.H_REASON).value(), StandardCharsets.UTF_8);
                        reasons.merge(why, 1, Integer::sum);
                    }
                }
            }
            assertEquals(Map.of("malformed", 1, "unknown_episode", 1, "late", 1), reasons);
        }
    }
}
