package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

class StreamCliTest {
    @Test
    void embeddedRunLabelsEveryEpisodeAsTheTruth(@TempDir Path dir) throws Exception {
        String lake = dir.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        Path brokerLog = dir.resolve("logs/kafka.log");
        CliRun r = CliRun.of("stream", "run", lake, "--episodes", "20", "--seed", "5", "--json", "--broker-log",
                brokerLog.toString());
        assertEquals(0, r.exitCode(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        // the broker's start-up output is in its log, not on the command's standard error
        assertEquals(brokerLog.toString(), j.get("broker_log").asText());
        assertTrue(Files.readString(brokerLog).contains("Formatting metadata directory"), Files.readString(brokerLog));
        assertTrue(!r.err().contains("Formatting metadata") && !r.err().contains("Bootstrap metadata"), r.err());
        assertEquals(20, j.get("episodes").asInt());
        assertEquals(20, j.get("labelled").asInt());
        assertEquals("label-rules-1", j.get("rules_version").asText());
        assertTrue(j.get("embedded").asBoolean());
        assertEquals("flink", j.get("engine").asText());
        int actual = 0;
        for (JsonNode c : j.get("classes")) {
            actual += c.get("actual").asInt();
            if (c.get("actual").asInt() > 0) {
                // the simulation's episodes are unambiguous for the default rules: every label is the truth
                assertEquals(1.0, c.get("recall").asDouble(), 1e-12, c.toString());
                assertEquals(1.0, c.get("precision").asDouble(), 1e-12, c.toString());
            }
        }
        assertEquals(20, actual);
        assertEquals(0, j.get("dead_letters").get("malformed").asInt());

        // a second run on the same lake: a new embedded broker, whose topics start at offset 0 again, labels its own
        // episodes (the positions the first run left in the lake belong to the first run's group)
        // (here with the plain consumer engine, the Flink job's peer)
        CliRun again = CliRun.of("stream", "run", lake, "--episodes", "3", "--seed", "5", "--engine", "consumer",
                "--broker-log", brokerLog.toString());
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.out().contains("broker log: " + brokerLog), again.out());
        assertTrue(!again.err().contains("Formatting metadata"), again.err());
        assertEquals(2, Files.readString(brokerLog).split("embedded Kafka broker \\(KRaft, one node\\) starting", -1).length - 1,
                "appended: " + Files.readString(brokerLog));
        assertTrue(again.out().contains("labelled 3/3 episodes") && again.out().contains("consumer engine"), again.out());
    }

    @Test
    void aRuleFileThatDoesNotParseIsExitOneNamingTheLine(@TempDir Path dir) throws Exception {
        String lake = dir.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, "version: x\nempty_grasp:\n  opening_below: lots\n");
        CliRun r = CliRun.of("stream", "run", lake, "--rules", rules.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains(rules + ":3: rule 'empty_grasp': 'opening_below' must be a number"), r.err());
        CliRun usage = CliRun.of("stream", "run", lake, "--bootstrap", "no-port");
        assertEquals(2, usage.exitCode(), usage.err());
        CliRun engine = CliRun.of("stream", "run", lake, "--engine", "storm");
        assertEquals(2, engine.exitCode(), engine.err());
        assertTrue(engine.err().contains("--engine must be flink or consumer, got 'storm'"), engine.err());
        // nothing listens there: a clear exit 1 after the producer's 15 s wait, not a hang
        CliRun unreachable = CliRun.of("stream", "run", lake, "--bootstrap", "127.0.0.1:1", "--episodes", "1");
        assertEquals(1, unreachable.exitCode(), unreachable.err());
        assertTrue(unreachable.err().contains("Kafka at 127.0.0.1:1 did not take the fleet events"), unreachable.err());
    }
}
