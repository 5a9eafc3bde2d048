package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.SharedData;

/** {@code ingest}, {@code mcap info} and {@code mcap cat} on rosbag2 sqlite3 bags (../shared/data/rosbag2-sqlite3). */
class Rosbag2SqliteCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void catOfTheSqliteBagPrintsWhatCatOfItsMcapTwinPrints() {
        Path bag = SharedData.data("rosbag2-sqlite3/cdr_test");
        Path twin = SharedData.data("mcap-real/ros2-rosbag2/cdr_test/cdr_test_0.mcap");
        CliRun a = CliRun.of("mcap", "cat", bag.toString(), "--json");
        CliRun b = CliRun.of("mcap", "cat", twin.toString(), "--json");
        assertEquals(0, a.exitCode(), a.err());
        assertEquals(0, b.exitCode(), b.err());
        assertEquals(7, a.out().lines().count());
        // every field but sequence, which rosbag2's MCAP writers number differently (0 throughout here, per topic
        // in talker) and the sqlite3 storage does not keep (printed: the index on the topic)
        assertEquals(withoutSequence(b.out()), withoutSequence(a.out()));
        assertTrue(a.err().contains("mcap cat: 7 message(s) from 2 topic(s) (rosbag2 sqlite3"), a.err());
        // talker: /rosout decodes with the built-in Log (the bag's definition rows are placeholders)
        CliRun t = CliRun.of("mcap", "cat", SharedData.data("rosbag2-sqlite3/talker/talker.db3").toString(), "--json",
                "--topic", "/rosout", "--limit", "3");
        CliRun tm = CliRun.of("mcap", "cat", SharedData.data("mcap-real/ros2-rosbag2/talker/talker.mcap").toString(),
                "--json", "--topic", "/rosout", "--limit", "3");
        assertEquals(0, t.exitCode(), t.err());
        assertEquals(tm.out(), t.out()); // talker's MCAP numbers per topic from 0, as printed for the sqlite3 bag
        // an unknown topic is named
        CliRun u = CliRun.of("mcap", "cat", bag.toString(), "--topic", "/nope");
        assertEquals(1, u.exitCode());
        assertTrue(u.err().contains("no topic /nope") && u.err().contains("/array_topic"), u.err());
    }

    private static String withoutSequence(String jsonLines) {
        return jsonLines.replaceAll("\"sequence\":[0-9]+,", "");
    }

    @Test
    void infoOfASplitBagGivesFilesCountsAndSpan() throws Exception {
        CliRun r = CliRun.of("mcap", "info", SharedData.data("rosbag2-sqlite3/wbag").toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode info = JSON.readTree(r.out());
        assertEquals("sqlite3", info.get("storage").asText());
        assertEquals(4, info.get("metadata_version").asInt());
        assertEquals(5, info.get("files").size());
        assertEquals(6074, info.get("message_count").asLong());
        assertEquals(1000, info.get("start_time").asLong());
        assertEquals(2998, info.get("end_time").asLong());
        assertEquals(8, info.get("topics").size());
        for (JsonNode t : info.get("topics")) {
            assertEquals("built-in", t.get("definition").asText(), t.toString()); // no message_definitions table
        }
        CliRun text = CliRun.of("mcap", "info", SharedData.data("rosbag2-sqlite3/talker").toString());
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("rcl_interfaces/msg/Log [cdr; definition: built-in]"), text.out());
        assertTrue(text.out().contains("note: the bag's definition of rcl_interfaces/msg/Log does not match"), text.out());
    }

    @Test
    void doctorChecksIntegrityCountsAndDefinitions() throws Exception {
        CliRun ok = CliRun.of("mcap", "doctor", SharedData.data("rosbag2-sqlite3/talker").toString(), "--json");
        assertEquals(0, ok.exitCode(), ok.err() + ok.out());
        JsonNode r = JSON.readTree(ok.out());
        assertTrue(r.get("ok").asBoolean());
        assertEquals(20, r.get("messages").asLong());
        assertEquals(0, r.get("errors").size());
        assertEquals(2, r.get("warnings").size(), r.toString()); // ParameterEvent's placeholder row; Log substituted
        // a message whose bytes end early: an error naming the file, the row and the topic
        Path bag = Files.createDirectories(tmp.resolve("short"));
        Files.copy(SharedData.data("rosbag2-sqlite3/wbag/metadata.yaml"), bag.resolve("metadata.yaml"));
        for (int i = 0; i < 5; i++) {
            Path f = bag.resolve("wbag_" + i + ".db3");
            Files.copy(SharedData.data("rosbag2-sqlite3/wbag/wbag_" + i + ".db3"), f);
            f.toFile().setWritable(true);
        }
        try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + bag.resolve("wbag_0.db3"));
             java.sql.Statement st = c.createStatement()) {
            st.execute("UPDATE messages SET data = X'0001000014000000' WHERE id = 7"); // a 20-byte string, no bytes
        }
        CliRun bad = CliRun.of("mcap", "doctor", bag.toString());
        assertEquals(1, bad.exitCode(), bad.out());
        assertTrue(bad.out().contains("error: " + bag.resolve("wbag_0.db3") + ": message 7 on "), bad.out());
        assertTrue(bad.out().contains("FAILED: " + bag + ": rosbag2 sqlite3, 5 file(s), 6074 message(s); 1 error(s)"),
                bad.out());
    }

    @Test
    void ingestTakesTheBagFolderOrADb3AndReportsBrokenBags() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun r = CliRun.of("ingest", lake, SharedData.data("rosbag2-sqlite3/talker").toString(),
                SharedData.data("rosbag2-sqlite3/wbag/wbag_3.db3").toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode out = JSON.readTree(r.out());
        assertTrue(out.toString().contains("ROSBAG2_SQLITE3"), out.toString());
        // the .db3 of a split bag is its whole bag: once more, and the folder, are the same recording
        CliRun again = CliRun.of("ingest", lake, SharedData.data("rosbag2-sqlite3/wbag").toString());
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.err().contains("skip") || again.out().contains("skip"), again.err() + again.out());
        // a truncated .db3: exit 1, the file, the byte where it ends and the size its header declares
        Path cut = Files.createDirectories(tmp.resolve("cut"));
        Files.copy(SharedData.data("rosbag2-sqlite3/talker/metadata.yaml"), cut.resolve("metadata.yaml"));
        byte[] db = Files.readAllBytes(SharedData.data("rosbag2-sqlite3/talker/talker.db3"));
        Files.write(cut.resolve("talker.db3"), java.util.Arrays.copyOf(db, 12288 + 100));
        CliRun bad = CliRun.of("ingest", lake, cut.toString());
        assertEquals(1, bad.exitCode(), bad.err());
        assertTrue(bad.err().contains(cut.resolve("talker.db3") + " at byte 12388: truncated"), bad.err());
        assertTrue(bad.err().contains("(28672 bytes)"), bad.err());
    }
}
