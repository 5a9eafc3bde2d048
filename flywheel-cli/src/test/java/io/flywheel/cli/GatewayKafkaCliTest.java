package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code gateway --kafka}: wrong usage is exit 2 with the reason, before anything starts. */
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
}
