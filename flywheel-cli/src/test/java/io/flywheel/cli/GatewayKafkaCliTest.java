package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gateway --kafka} and {@code sim --live --stream-events}: wrong usage is exit 2 with the reason, before anything
 * starts.
 */
class GatewayKafkaCliTest {
    @Test
    void kafkaNeedsAnMqttBrokerAndAHostPort(@TempDir Path dir) {
        String lake = dir.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun noMqtt = CliRun.of("gateway", lake, "--grpc-port", "0", "--kafka", "127.0.0.1:9092");
        assertEquals(2, noMqtt.exitCode(), noMqtt.err());
        assertTrue(noMqtt.err().contains("--kafka relays what the robots publish over MQTT: give --mqtt URL or"
                + " --embedded-mqtt too"), noMqtt.err());
        CliRun embeddedNoMqtt = CliRun.of("gateway", lake, "--grpc-port", "0", "--embedded-kafka");
        assertEquals(2, embeddedNoMqtt.exitCode(), embeddedNoMqtt.err());
        assertTrue(embeddedNoMqtt.err().contains("--embedded-kafka relays"), embeddedNoMqtt.err());
        CliRun badAddress = CliRun.of("gateway", lake, "--grpc-port", "0", "--embedded-mqtt", "--kafka", "nohost");
        assertEquals(2, badAddress.exitCode(), badAddress.err());
        assertTrue(badAddress.err().contains("--kafka must be HOST:PORT[,HOST:PORT...], got 'nohost'"), badAddress.err());
        CliRun both = CliRun.of("gateway", lake, "--embedded-mqtt", "--kafka", "h:1", "--embedded-kafka");
        assertEquals(2, both.exitCode(), both.err());
    }

    @Test
    void streamEventsNeedLiveAndAnMqttBroker(@TempDir Path dir) throws java.io.IOException {
        Path tokens = java.nio.file.Files.writeString(dir.resolve("fleet.tokens"), "robot_01 t1\nrobot_02 t2\nrobot_03 t3\n");
        CliRun notLive = CliRun.of("sim", "--stream-events", "--out", dir.resolve("f").toString());
        assertEquals(2, notLive.exitCode(), notLive.err());
        assertTrue(notLive.err().contains("--stream-events needs --live"), notLive.err());
        CliRun noMqtt = CliRun.of("sim", "--live", "--gateway", "127.0.0.1:1", "--tokens", tokens.toString(),
                "--stream-events", "--out",
                dir.resolve("g").toString());
        assertEquals(2, noMqtt.exitCode(), noMqtt.err());
        assertTrue(noMqtt.err().contains("the fleet stream is published over MQTT: it needs an MQTT broker (--mqtt)"),
                noMqtt.err());
    }

    /**
     * The gateway with an embedded MQTT broker and an embedded Kafka broker: a robot's episode event published over
     * MQTT is on fleet.episodes, keyed by the robot; the stopped line counts it.
     */
    @Test
    void theGatewayRelaysTheFleetStreamToItsEmbeddedKafka(@TempDir Path dir) throws Exception {
        String lake = dir.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        GatewayProcess gw = GatewayProcess.start(dir.resolve("gw"), null, "gateway", lake, "--grpc-port", "0",
                "--host", "127.0.0.1", "--embedded-mqtt", "--mqtt-port", "0", "--embedded-kafka", "--json",
                "--stats-every", "0");
        try {
            com.fasterxml.jackson.databind.JsonNode up = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                    gw.await(l -> l.contains("\"event\":\"listening\"")));
            assertTrue(up.get("kafka_embedded").asBoolean(), up.toString());
            String bootstrap = up.get("kafka").asText();
            java.net.URI mqtt = java.net.URI.create(up.get("mqtt").asText());
            var robot = com.hivemq.client.mqtt.MqttClient.builder().useMqttVersion3().identifier("arm-7")
                    .serverHost(mqtt.getHost()).serverPort(mqtt.getPort()).buildBlocking();
            robot.connect();
            robot.publishWith().topic("fleet/arm-7/stream/episode")
                    .qos(com.hivemq.client.mqtt.datatypes.MqttQos.AT_LEAST_ONCE)
                    .payload(io.flywheel.fleet.v1.EpisodeEvent.newBuilder().setRobotId("arm-7").setEpisodeId("e-1")
                            .setKind(io.flywheel.fleet.v1.EpisodeEvent.Kind.STARTED).setTimeNs(1_767_225_600_000_000_000L)
                            .build().toByteArray()).send();
            robot.disconnect();
            java.util.Properties p = new java.util.Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("group.id", "cli-test");
            p.put("auto.offset.reset", "earliest");
            p.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            p.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
            java.util.List<org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]>> got = new java.util.ArrayList<>();
            try (var c = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(p)) {
                c.subscribe(java.util.List.of("fleet.episodes"));
                long until = System.nanoTime() + 30_000_000_000L;
                while (got.isEmpty() && System.nanoTime() < until) {
                    c.poll(java.time.Duration.ofMillis(200)).forEach(got::add);
                }
            }
            assertEquals(1, got.size());
            assertEquals("arm-7", new String(got.get(0).key(), java.nio.charset.StandardCharsets.UTF_8));
            assertEquals("e-1", io.flywheel.fleet.v1.EpisodeEvent.parseFrom(got.get(0).value()).getEpisodeId());
            gw.process().destroy(); // SIGTERM: the graceful shutdown
            assertTrue(gw.process().waitFor(60, java.util.concurrent.TimeUnit.SECONDS), gw.lines().toString());
            String stopped = gw.await(l -> l.contains("\"event\":\"stopped\""));
            assertEquals(1, new com.fasterxml.jackson.databind.ObjectMapper().readTree(stopped).get("kafka")
                    .get("episodes").asInt(), stopped);
        } finally {
            gw.process().destroyForcibly();
        }
    }
}
