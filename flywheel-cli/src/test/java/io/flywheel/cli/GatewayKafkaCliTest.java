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
}
