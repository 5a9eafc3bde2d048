package io.flywheel.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;

import io.flywheel.fleet.telemetry.TelemetryOptions;
import io.flywheel.fleet.telemetry.TelemetrySubscriber;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.testkit.Mosquitto;

/**
 * QoS 0 telemetry into the lake: N JSON messages of about 200 bytes published by P HiveMQ MQTT 5 clients to a Debian
 * mosquitto broker, taken by Flywheel's TelemetrySubscriber into the {@code telemetry} table (micro-batches, one lake
 * commit each), against {@code mosquitto_sub -t 'fleet/#' -C N > /dev/null} taking the same messages from the same
 * broker in the same run. Each side's rate is messages over the time from the first publish to the last message
 * received (mosquitto_sub exits after N) or committed (the subscriber's count reaches N, or stops growing: QoS 0
 * messages the broker drops while a subscriber falls behind are lost by design; their count is printed).
 *
 * <p>Arguments: folder (must not exist), messages, publishers. Prints one JSON line.
 */
public final class TelemetryBench {
    private TelemetryBench() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int n = Integer.parseInt(args[1]);
        int publishers = Integer.parseInt(args[2]);
        try (Mosquitto broker = Mosquitto.start(dir.resolve("broker"))) {
            // the peer: mosquitto_sub, subscribed before the first publish, exits after n messages
            Process sub = new ProcessBuilder("mosquitto_sub", "-h", "127.0.0.1", "-p", Integer.toString(broker.port()),
                    "-t", "fleet/#", "-q", "0", "-C", Integer.toString(n)).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Thread.sleep(1000);
            long p0 = System.nanoTime();
            double publishS = publish(broker.port(), n, publishers, "peer");
            boolean peerDone = sub.waitFor(120, TimeUnit.SECONDS);
            double peerS = (System.nanoTime() - p0) / 1e9;
            if (!peerDone) {
                sub.destroyForcibly();
            }

            try (Lake lake = Lake.init(dir.resolve("lake"));
                    TelemetrySubscriber s = TelemetrySubscriber.start(lake, TelemetryOptions.builder(broker.url())
                            .clientId("bench-gateway").build(), line -> { })) {
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!s.stats().connected() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                long t0 = System.nanoTime();
                double ourPublishS = publish(broker.port(), n, publishers, "ours");
                // until every message is committed, or nothing more arrives for 5 s (QoS 0 messages the broker
                // dropped while the subscriber fell behind never come)
                long lastCount = -1;
                long lastChangeNs = System.nanoTime();
                while (s.stats().committed() < n && System.nanoTime() - lastChangeNs < 5_000_000_000L) {
                    long c = s.stats().committed();
                    if (c != lastCount) {
                        lastCount = c;
                        lastChangeNs = System.nanoTime();
                    }
                    Thread.sleep(5);
                }
                double oursS = ((s.stats().committed() >= n ? System.nanoTime() : lastChangeNs) - t0) / 1e9;
                long received = s.stats().received();
                long rows;
                lake.refresh();
                try (LakeTable t = lake.table("telemetry")) {
                    rows = t.countRows();
                }
                System.out.printf(Locale.ROOT, "{\"messages\":%d,\"publishers\":%d,\"payload_bytes\":%d,"
                        + "\"peer_s\":%.2f,\"peer_msgs_s\":%.0f,\"peer_complete\":%b,\"peer_publish_s\":%.2f,"
                        + "\"ours_s\":%.2f,\"ours_msgs_s\":%.0f,\"ours_publish_s\":%.2f,\"received\":%d,\"rows\":%d,\"batches\":%d,"
                        + "\"duplicates\":%d,\"malformed\":%d}%n", n, publishers, payload("ours", 0, 0).length, peerS,
                        n / peerS, peerDone, publishS, oursS, rows / oursS, ourPublishS, received, rows, s.stats().batches(),
                        s.stats().duplicates(), s.stats().malformed());
            }
        }
    }

    /** About 200 bytes of telemetry JSON, as a robot's heartbeat would be. */
    static byte[] payload(String run, int publisher, int i) {
        String json = String.format(Locale.ROOT, "{\"message_id\":\"%s-%d-%08d\",\"ts_ns\":%d,\"kind\":\"heartbeat\","
                + "\"values\":{\"cpu_load\":%.3f,\"temp_c\":%.2f,\"battery_v\":%.3f,\"wifi_dbm\":%d},"
                + "\"text\":\"nominal\"}", run, publisher, i, 1_700_000_000_000_000_000L + i * 1_000_000L,
                (i % 100) / 100.0, 40 + (i % 50) / 10.0, 48 + (i % 7) / 10.0, -40 - i % 30);
        return json.getBytes(StandardCharsets.UTF_8);
    }

    /** Publishes n messages at QoS 0, split over the publishers. @return seconds until the last is handed over */
    static double publish(int port, int n, int publishers, String run) throws Exception {
        List<Mqtt5AsyncClient> clients = new ArrayList<>();
        for (int p = 0; p < publishers; p++) {
            Mqtt5AsyncClient c = MqttClient.builder().useMqttVersion5().identifier(run + "-pub-" + p)
                    .serverHost("127.0.0.1").serverPort(port).buildAsync();
            c.connect().get(10, TimeUnit.SECONDS);
            clients.add(c);
        }
        long t0 = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < publishers; p++) {
            int pub = p;
            Thread t = new Thread(() -> {
                Mqtt5AsyncClient c = clients.get(pub);
                String topic = "fleet/robot-" + pub + "/telemetry/heartbeat";
                java.util.ArrayDeque<CompletableFuture<?>> last = new java.util.ArrayDeque<>();
                for (int i = pub; i < n; i += publishers) {
                    CompletableFuture<?> f = c.publishWith().topic(topic).qos(MqttQos.AT_MOST_ONCE)
                            .payload(payload(run, pub, i)).send();
                    if (last.size() >= 1000) {
                        last.removeFirst().join(); // at most 1,000 publishes in flight per client
                    }
                    last.add(f);
                }
                last.forEach(CompletableFuture::join);
            }, "publisher-" + p);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        double s = (System.nanoTime() - t0) / 1e9;
        for (Mqtt5AsyncClient c : clients) {
            c.disconnect().get(10, TimeUnit.SECONDS);
        }
        return s;
    }

}
