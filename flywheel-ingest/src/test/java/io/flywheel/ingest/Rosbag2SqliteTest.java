package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.github.luben.zstd.Zstd;

import io.flywheel.decode.Decoders;
import io.flywheel.decode.JsonTree;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.mcap.MessageView;
import io.flywheel.testkit.SharedData;

/**
 * rosbag2 sqlite3 storage on the real bags of ros2/rosbag2's test resources ({@code ../shared/data/rosbag2-sqlite3}),
 * checked against their MCAP twins (the same recordings in rosbag2's MCAP storage), and on bags made here from them.
 */
class Rosbag2SqliteTest {
    @TempDir
    Path tmp;

    /** One message as both storages give it: topic, log time, bytes, decoded tree as JSON (or "" when undecodable). */
    record Msg(String topic, long logTime, String dataHex, String json) {}

    static List<Msg> sqliteMessages(Path bagPath) throws IOException {
        List<Msg> out = new ArrayList<>();
        try (Rosbag2SqliteBag bag = Rosbag2SqliteBag.open(bagPath)) {
            Map<String, MessageDecoder> dec = new LinkedHashMap<>();
            for (Rosbag2SqliteBag.Topic t : bag.topics()) {
                try {
                    dec.put(t.name(), bag.decoder(t.name()));
                } catch (IngestException e) {
                    dec.put(t.name(), null); // not decodable: compared by bytes
                }
            }
            bag.messages(null, Long.MIN_VALUE, Long.MAX_VALUE, m -> {
                MessageDecoder d = dec.get(m.topic().name());
                out.add(new Msg(m.topic().name(), m.logTimeNs(), hex(m.data()), d == null ? "" : json(d, m.data())));
            });
        }
        return out;
    }

    static List<Msg> mcapMessages(Path mcap, Map<String, Boolean> decode) throws IOException {
        List<Msg> out = new ArrayList<>();
        Map<Integer, MessageDecoder> dec = new LinkedHashMap<>();
        try (McapMessages r = McapMessages.open(mcap, McapIndexedReader.ReadOptions.builder().build())) {
            MessageView v;
            while ((v = r.next()) != null) {
                String topic = v.channel().topic();
                MessageDecoder d = null;
                if (decode.getOrDefault(topic, false)) {
                    MessageView view = v;
                    d = dec.computeIfAbsent(v.channel().id(), id -> {
                        try {
                            ByteBuffer s = view.schema().data().duplicate();
                            byte[] b = new byte[s.remaining()];
                            s.get(b);
                            return Decoders.forSchema("cdr", view.schema().name(), view.schema().encoding(), b);
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    });
                }
                out.add(new Msg(topic, v.message().logTime(), hex(v.message().data()),
                        d == null ? "" : json(d, v.message().data())));
            }
        }
        return out;
    }

    static String json(MessageDecoder d, ByteBuffer data) {
        try {
            return JsonTree.toJson(d.decode(data.duplicate()));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static String hex(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] a = new byte[d.remaining()];
        d.get(a);
        return java.util.HexFormat.of().formatHex(a);
    }

    /** The sqlite3 bag and its MCAP twin: the same messages in the same order, byte for byte and decoded. */
    static void assertSameMessages(Path sqliteBag, Path mcap) throws IOException {
        List<Msg> a = sqliteMessages(sqliteBag);
        Map<String, Boolean> decodable = new LinkedHashMap<>();
        for (Msg m : a) decodable.put(m.topic(), !m.json().isEmpty());
        List<Msg> b = mcapMessages(mcap, decodable);
        assertEquals(b.size(), a.size());
        for (int i = 0; i < a.size(); i++) {
            assertEquals(b.get(i), a.get(i), "message " + i);
        }
    }

    /** Two recordings give the same streams: topic, role, type, log times, stamps, values, names, texts. */
    static void assertSameRows(Recording mcap, Recording sqlite) {
        Episode x = mcap.episodes().get(0);
        Episode y = sqlite.episodes().get(0);
        assertEquals(x.streams().stream().map(StreamData::topic).sorted().toList(),
                y.streams().stream().map(StreamData::topic).sorted().toList());
        assertEquals(x.messageCount(), y.messageCount());
        assertEquals(x.masterTopic(), y.masterTopic());
        for (StreamData s : x.streams()) {
            StreamData t = y.stream(s.topic()).orElseThrow();
            assertEquals(s.role(), t.role(), s.topic());
            assertEquals(s.messageType(), t.messageType(), s.topic());
            assertArrayEquals(s.logTimeNs(), t.logTimeNs(), s.topic());
            assertArrayEquals(s.headerStampNs(), t.headerStampNs(), s.topic());
            assertArrayEquals(s.timeNs(), t.timeNs(), s.topic());
            assertEquals(s.values() == null, t.values() == null, s.topic());
            if (s.values() != null) {
                for (int i = 0; i < s.size(); i++) assertArrayEquals(s.values()[i], t.values()[i], s.topic() + " " + i);
            }
            assertEquals(s.names(), t.names(), s.topic());
            assertEquals(s.texts(), t.texts(), s.topic());
        }
    }

    @Test
    void talkerMatchesItsMcapTwinMessageByMessageAndRowByRow() throws Exception {
        Path bag = SharedData.data("rosbag2-sqlite3/talker");
        Path twin = SharedData.data("mcap-real/ros2-rosbag2/talker/talker.mcap");
        assertSameMessages(bag, twin);
        try (Rosbag2SqliteBag b = Rosbag2SqliteBag.open(bag)) {
            assertEquals(4, b.metadata().version());
            assertEquals(Map.of("/rosout", 10L, "/parameter_events", 0L, "/topic", 10L), b.messageCounts());
            assertArrayEquals(new long[] {1585866235112411371L, 1585866239643508139L}, b.logTimeSpan());
            // the bag's message_definitions rows are placeholders ("uint8 level" for Log): the built-in Log is used
            b.decoder("/rosout");
            assertEquals("built-in", b.definitionsUsed().get("rcl_interfaces/msg/Log").source());
            assertTrue(b.notes().get(0).contains("rcl_interfaces/msg/Log"), b.notes().toString());
            // std_msgs/String: the bag's "string data" fits
            b.decoder("/topic");
            assertEquals("bag", b.definitionsUsed().get("std_msgs/msg/String").source());
        }
        Recording sqlite = Ingest.read(bag);
        assertEquals(SourceFormat.ROSBAG2_SQLITE3, sqlite.format());
        assertEquals(1, sqlite.files().size());
        assertEquals(28672, sqlite.bytes());
        assertEquals("4", sqlite.metadata().get("rosbag2.metadata_version"));
        assertSameRows(Ingest.read(twin), sqlite);
        // the .db3 alone names the same bag
        assertEquals(sqlite.recordingId(), Ingest.read(bag.resolve("talker.db3")).recordingId());
    }

    @Test
    void cdrTestMatchesItsMcapTwinWithTheBagsOwnDefinitions() throws Exception {
        Path bag = SharedData.data("rosbag2-sqlite3/cdr_test");
        Path twin = SharedData.data("mcap-real/ros2-rosbag2/cdr_test/cdr_test_0.mcap");
        assertSameMessages(bag, twin);
        try (Rosbag2SqliteBag b = Rosbag2SqliteBag.open(bag)) {
            assertEquals(7, b.metadata().version());
            Object first = null;
            for (Rosbag2SqliteBag.Topic t : b.topics()) b.decoder(t.name());
            assertEquals("bag", b.definitionsUsed().get("test_msgs/msg/BasicTypes").source());
            assertEquals("bag", b.definitionsUsed().get("test_msgs/msg/Arrays").source());
            assertTrue(b.notes().isEmpty(), b.notes().toString());
            List<Object> trees = new ArrayList<>();
            MessageDecoder d = b.decoder("/test_topic");
            b.messages(java.util.Set.of("/test_topic"), Long.MIN_VALUE, Long.MAX_VALUE, m -> {
                try {
                    trees.add(d.decode(m.data()));
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertEquals(3, trees.size());
            first = trees.get(0);
            // the first message's bytes (sqlite3 shell: hex(data)) hold zeros but for 7B 00 00 00 at offset 28:
            // int32_value = 123
            assertEquals(123, ((Map<?, ?>) first).get("int32_value"));
            assertEquals(false, ((Map<?, ?>) first).get("bool_value"));
        }
        assertSameRows(Ingest.read(twin), Ingest.read(bag));
    }

    @Test
    void serviceEventBagKeepsEveryMessage() throws Exception {
        // (the MCAP of the same name in mcap-real is another recording: other log times)
        Path bag = SharedData.data("rosbag2-sqlite3/bag_with_topics_and_service_events");
        try (Rosbag2SqliteBag b = Rosbag2SqliteBag.open(bag)) {
            assertEquals(8, b.metadata().version());
            assertEquals(Map.of("/test_topic2", 1L, "/test_topic1", 1L, "/test_service2/_service_event", 4L,
                    "/test_service1/_service_event", 4L, "/events/write_split", 0L), b.messageCounts());
            // service events: the bag defines test_msgs/srv/BasicTypes, not the _Event type; nothing is built in
            IngestException e = assertThrows(IngestException.class, () -> b.decoder("/test_service1/_service_event"));
            assertTrue(e.getMessage().contains("bag_with_topics_and_service_events.db3"), e.getMessage());
            assertTrue(e.getMessage().contains("test_msgs/srv/BasicTypes_Event"), e.getMessage());
            assertTrue(e.getMessage().contains("expected a message_definitions row"), e.getMessage());
        }
        Recording sqlite = Ingest.read(bag);
        Episode ep = sqlite.episodes().get(0);
        assertEquals(10, ep.messageCount());
        StreamData s2 = ep.stream("/test_service2/_service_event").orElseThrow();
        assertEquals(StreamRole.OTHER, s2.role()); // a side stream: its log times, not decoded
        assertArrayEquals(new long[] {1699345836023194036L, 1699345836023414745L, 1699345836033491628L,
            1699345836033534554L}, s2.logTimeNs());
        assertArrayEquals(new long[] {1699345836043664928L}, ep.stream("/test_topic1").orElseThrow().logTimeNs());
        assertEquals("8", sqlite.metadata().get("rosbag2.metadata_version"));
    }

    @Test
    void splitBagOfFiveFilesWithTheOldSchemaIsOneRecording() throws Exception {
        Path bag = SharedData.data("rosbag2-sqlite3/wbag");
        Sources.Source src = Sources.detect(bag);
        assertEquals(SourceFormat.ROSBAG2_SQLITE3, src.format());
        assertEquals(List.of("wbag_0.db3", "wbag_1.db3", "wbag_2.db3", "wbag_3.db3", "wbag_4.db3"),
                src.files().stream().map(p -> p.getFileName().toString()).toList());
        // one of its files names the whole bag
        assertEquals(src.files(), Sources.detect(bag.resolve("wbag_2.db3")).files());
        try (Rosbag2SqliteBag b = Rosbag2SqliteBag.open(bag)) {
            // the counts metadata.yaml states
            Map<String, Long> counts = b.messageCounts();
            assertEquals(726L, counts.get("HHH"));
            assertEquals(742L, counts.get("BBB"));
            assertEquals(753L, counts.get("DDD"));
            assertEquals(6074L, counts.values().stream().mapToLong(Long::longValue).sum());
            assertEquals(6074L, b.metadata().messageCount());
            assertArrayEquals(new long[] {1000, 2998}, b.logTimeSpan());
            // no message_definitions table (the older schema): std_msgs/String decodes with the built-in definition
            MessageDecoder d = b.decoder("EEE");
            assertEquals("built-in", b.definitionsUsed().get("std_msgs/msg/String").source());
            List<String> first = new ArrayList<>();
            long[] last = {Long.MIN_VALUE};
            List<String> fileOrder = new ArrayList<>();
            b.messages(null, Long.MIN_VALUE, Long.MAX_VALUE, m -> {
                if (first.isEmpty()) first.add(m.topic().name() + " " + m.logTimeNs() + " " + json(d, m.data()));
                assertTrue(m.logTimeNs() >= last[0], "log-time order across the split files");
                last[0] = m.logTimeNs();
                String f = m.file().getFileName().toString();
                if (fileOrder.isEmpty() || !fileOrder.get(fileOrder.size() - 1).equals(f)) fileOrder.add(f);
            });
            assertEquals(List.of("EEE 1000 {\"data\":\"Hello, world! 0 - 0\"}"), first);
            assertEquals(List.of("wbag_0.db3", "wbag_1.db3", "wbag_2.db3", "wbag_3.db3", "wbag_4.db3"), fileOrder);
        }
        Recording r = Ingest.read(bag);
        assertEquals(5, r.files().size());
        assertEquals(6074, r.episodes().get(0).messageCount());
        assertEquals(726, r.episodes().get(0).stream("HHH").orElseThrow().size());
    }

    @Test
    void metadataVersion9IsRead() throws Exception {
        Path bag = copyBag("rosbag2-sqlite3/talker", "talker9");
        String v9 = """
                rosbag2_bagfile_information:
                  version: 9
                  storage_identifier: sqlite3
                  duration:
                    nanoseconds: 4531096768
                  starting_time:
                    nanoseconds_since_epoch: 1585866235112411371
                  message_count: 20
                  topics_with_message_count:
                    - topic_metadata:
                        name: /topic
                        type: std_msgs/msg/String
                        serialization_format: cdr
                        offered_qos_profiles:
                          - history: keep_last
                            depth: 7
                            reliability: reliable
                            durability: transient_local
                        type_description_hash: RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18
                      message_count: 10
                    - topic_metadata:
                        name: /rosout
                        type: rcl_interfaces/msg/Log
                        serialization_format: cdr
                        offered_qos_profiles: []
                        type_description_hash: ""
                      message_count: 10
                  compression_format: ""
                  compression_mode: ""
                  relative_file_paths:
                    - talker.db3
                  files:
                    - path: talker.db3
                      starting_time:
                        nanoseconds_since_epoch: 1585866235112411371
                      duration:
                        nanoseconds: 4531096768
                      message_count: 20
                  custom_data:
                    operator: alice
                  ros_distro: jazzy
                """;
        Files.writeString(bag.resolve("metadata.yaml"), v9);
        Rosbag2Metadata md = Rosbag2Metadata.read(bag.resolve("metadata.yaml"));
        assertEquals(9, md.version());
        assertEquals("jazzy", md.rosDistro());
        assertEquals(Map.of("operator", "alice"), md.customData());
        Rosbag2Metadata.Topic topic = md.topics().get(0);
        assertTrue(topic.offeredQosProfiles().contains("depth: 7"), topic.offeredQosProfiles());
        assertTrue(topic.typeDescriptionHash().startsWith("RIHS01_df66"));
        Recording r = Ingest.read(bag);
        assertEquals("9", r.metadata().get("rosbag2.metadata_version"));
        assertEquals("jazzy", r.metadata().get("rosbag2.ros_distro"));
        assertEquals("alice", r.metadata().get("rosbag2.custom_data.operator"));
        assertSameRows(Ingest.read(SharedData.data("rosbag2-sqlite3/talker")), r);
        // versions outside 4..9 are refused by number
        Files.writeString(bag.resolve("metadata.yaml"), v9.replace("version: 9", "version: 10"));
        IngestException e = assertThrows(IngestException.class, () -> Ingest.read(bag));
        assertTrue(e.getMessage().contains("metadata.yaml") && e.getMessage().contains("version 10")
                && e.getMessage().contains("4..9"), e.getMessage());
    }

    @Test
    void messageAndFileZstdCompressionGiveTheSameMessages() throws Exception {
        Path plain = SharedData.data("rosbag2-sqlite3/talker");
        List<Msg> expected = sqliteMessages(plain);
        // MESSAGE: each data blob a zstd frame
        Path bag = copyBag("rosbag2-sqlite3/talker", "talker_zstd_message");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + bag.resolve("talker.db3"))) {
            List<long[]> ids = new ArrayList<>();
            List<byte[]> blobs = new ArrayList<>();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, data FROM messages")) {
                while (rs.next()) {
                    ids.add(new long[] {rs.getLong(1)});
                    blobs.add(rs.getBytes(2));
                }
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE messages SET data = ? WHERE id = ?")) {
                for (int i = 0; i < ids.size(); i++) {
                    ps.setBytes(1, Zstd.compress(blobs.get(i), 3));
                    ps.setLong(2, ids.get(i)[0]);
                    ps.executeUpdate();
                }
            }
        }
        rewriteMetadata(bag, "compression_format: \"\"\n  compression_mode: \"\"",
                "compression_format: zstd\n  compression_mode: MESSAGE");
        assertEquals(expected, sqliteMessages(bag));
        assertEquals("zstd/MESSAGE", Ingest.read(bag).metadata().get("rosbag2.compression"));
        // FILE: talker.db3.zstd
        Path fileBag = copyBag("rosbag2-sqlite3/talker", "talker_zstd_file");
        byte[] db = Files.readAllBytes(fileBag.resolve("talker.db3"));
        Files.write(fileBag.resolve("talker.db3.zstd"), Zstd.compress(db, 3));
        Files.delete(fileBag.resolve("talker.db3"));
        rewriteMetadata(fileBag, "compression_format: \"\"\n  compression_mode: \"\"",
                "compression_format: zstd\n  compression_mode: FILE");
        rewriteMetadata(fileBag, "- talker.db3", "- talker.db3.zstd");
        assertEquals(expected, sqliteMessages(fileBag));
    }

    @Test
    void missingMetadataTruncatedAndCorruptFilesAreClearErrors() throws Exception {
        // a .db3 of the old schema without its metadata.yaml
        Path lone = Files.createDirectories(tmp.resolve("lone"));
        Files.copy(SharedData.data("rosbag2-sqlite3/wbag/wbag_0.db3"), lone.resolve("wbag_0.db3"));
        IngestException e = assertThrows(IngestException.class, () -> Ingest.read(lone));
        assertTrue(e.getMessage().contains("metadata.yaml") && e.getMessage().contains("missing"), e.getMessage());
        e = assertThrows(IngestException.class, () -> Rosbag2SqliteBag.open(lone));
        assertTrue(e.getMessage().startsWith(lone.resolve("metadata.yaml").toString()), e.getMessage());
        // a .db3 of Iron's schema carries its metadata in a table: read alone
        Path iron = Files.createDirectories(tmp.resolve("iron"));
        Files.copy(SharedData.data("rosbag2-sqlite3/cdr_test/cdr_test_0.db3"), iron.resolve("cdr_test_0.db3"));
        assertEquals(7, Ingest.read(iron.resolve("cdr_test_0.db3")).episodes().get(0).messageCount());
        // truncated: the header declares 7 pages of 4096 bytes
        Path cut = copyBag("rosbag2-sqlite3/talker", "cut");
        byte[] all = Files.readAllBytes(cut.resolve("talker.db3"));
        Files.write(cut.resolve("talker.db3"), java.util.Arrays.copyOf(all, 20000));
        e = assertThrows(IngestException.class, () -> Ingest.read(cut));
        assertTrue(e.getMessage().startsWith(cut.resolve("talker.db3").toString() + " at byte 20000: truncated"), e.getMessage());
        assertTrue(e.getMessage().contains("7 pages of 4096 bytes (28672 bytes)"), e.getMessage());
        // corrupt: every page after the first overwritten
        Path bad = copyBag("rosbag2-sqlite3/talker", "bad");
        byte[] garbage = all.clone();
        for (int i = 4096; i < garbage.length; i++) garbage[i] = (byte) 0xA5;
        Files.write(bad.resolve("talker.db3"), garbage);
        e = assertThrows(IngestException.class, () -> Ingest.read(bad));
        assertTrue(e.getMessage().startsWith(bad.resolve("talker.db3").toString()), e.getMessage());
        assertTrue(e.getMessage().contains("corrupt") || e.getMessage().contains("not a SQLite database"), e.getMessage());
        assertTrue(e.getMessage().contains("expected a rosbag2 sqlite3 storage file"), e.getMessage());
        // not SQLite at all, listed in metadata.yaml
        Path notDb = copyBag("rosbag2-sqlite3/talker", "notdb");
        Files.writeString(notDb.resolve("talker.db3"), "hello");
        e = assertThrows(IngestException.class, () -> Rosbag2SqliteBag.open(notDb));
        assertTrue(e.getMessage().contains("talker.db3 at byte 0: not a SQLite file"), e.getMessage());
        // metadata.yaml naming a file that is not there
        Path gone = copyBag("rosbag2-sqlite3/talker", "gone");
        Files.delete(gone.resolve("talker.db3"));
        e = assertThrows(IngestException.class, () -> Ingest.read(gone));
        assertTrue(e.getMessage().contains("names file talker.db3, which does not exist"), e.getMessage());
    }

    @Test
    void aTopicOfAnUnknownTypeThatNeedsDecodingIsAnError() throws Exception {
        Path bag = Files.createDirectories(tmp.resolve("verdict"));
        Path db = bag.resolve("verdict_0.db3");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,"
                    + " serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL)");
            s.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL,"
                    + " data BLOB NOT NULL)");
            s.execute("INSERT INTO topics VALUES (1, '/outcome', 'acme_msgs/msg/Verdict', 'cdr', '')");
            s.execute("INSERT INTO topics VALUES (2, '/chatter', 'std_msgs/msg/String', 'cdr', '')");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO messages VALUES (?, ?, ?, ?)")) {
                ps.setLong(1, 1);
                ps.setLong(2, 2);
                ps.setLong(3, 1_700_000_000_000_000_000L);
                ps.setBytes(4, new byte[] {0, 1, 0, 0, 3, 0, 0, 0, 'h', 'i', 0, 0}); // CDR LE, string "hi"
                ps.executeUpdate();
                ps.setLong(1, 2);
                ps.setLong(2, 1);
                ps.setLong(3, 1_700_000_000_100_000_000L);
                ps.setBytes(4, new byte[] {0, 1, 0, 0, 1, 0, 0, 0});
                ps.executeUpdate();
            }
        }
        Files.writeString(bag.resolve("metadata.yaml"), """
                rosbag2_bagfile_information:
                  version: 5
                  storage_identifier: sqlite3
                  relative_file_paths:
                    - verdict_0.db3
                  duration: {nanoseconds: 100000000}
                  starting_time: {nanoseconds_since_epoch: 1700000000000000000}
                  message_count: 2
                  topics_with_message_count: []
                  compression_format: ""
                  compression_mode: ""
                """);
        IngestException e = assertThrows(IngestException.class, () -> Ingest.read(bag));
        assertTrue(e.getMessage().startsWith(db.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("topic /outcome has type acme_msgs/msg/Verdict"), e.getMessage());
        assertTrue(e.getMessage().contains("expected a message_definitions row for acme_msgs/msg/Verdict"), e.getMessage());
        // the String topic alone decodes through the built-in definition
        try (Rosbag2SqliteBag b = Rosbag2SqliteBag.open(bag)) {
            MessageDecoder d = b.decoder("/chatter");
            List<String> got = new ArrayList<>();
            b.messages(java.util.Set.of("/chatter"), Long.MIN_VALUE, Long.MAX_VALUE,
                    m -> got.add(json(d, m.data())));
            assertEquals(List.of("{\"data\":\"hi\"}"), got);
        }
    }

    @Test
    void aBagWithMessagesStillInItsWalIsReadWithoutWritingBesideIt() throws Exception {
        // a recorder stopped before its checkpoint: the database file holds the tables, the WAL the last messages
        Path live = Files.createDirectories(tmp.resolve("live"));
        Path bag = Files.createDirectories(tmp.resolve("stopped"));
        Path db = live.resolve("stopped_0.db3");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
            s.execute("PRAGMA wal_autocheckpoint=0");
            s.execute("CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,"
                    + " serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL)");
            s.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL,"
                    + " data BLOB NOT NULL)");
            s.execute("PRAGMA wal_checkpoint(TRUNCATE)"); // the tables in the database file
            s.execute("INSERT INTO topics VALUES (1, '/chatter', 'std_msgs/msg/String', 'cdr', '')");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO messages VALUES (?, 1, ?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    ps.setLong(1, i);
                    ps.setLong(2, 1_000L * i);
                    ps.setBytes(3, new byte[] {0, 1, 0, 0, 2, 0, 0, 0, (byte) ('0' + i), 0});
                    ps.executeUpdate();
                }
            }
            // copied while the writer still holds it: the messages are in the WAL only
            Files.copy(db, bag.resolve("stopped_0.db3"));
            Files.copy(live.resolve("stopped_0.db3-wal"), bag.resolve("stopped_0.db3-wal"));
        }
        assertTrue(Files.size(bag.resolve("stopped_0.db3-wal")) > 0);
        Files.writeString(bag.resolve("metadata.yaml"), """
                rosbag2_bagfile_information:
                  version: 5
                  storage_identifier: sqlite3
                  relative_file_paths: [stopped_0.db3]
                  message_count: 3
                """);
        List<String> before;
        try (var l = Files.list(bag)) {
            before = l.map(p -> p.getFileName().toString()).sorted().toList();
        }
        try (Rosbag2SqliteBag b = Rosbag2SqliteBag.open(bag)) {
            MessageDecoder d = b.decoder("/chatter");
            List<String> got = new ArrayList<>();
            b.messages(null, Long.MIN_VALUE, Long.MAX_VALUE, m -> got.add(m.logTimeNs() + " " + json(d, m.data())));
            assertEquals(List.of("1000 {\"data\":\"1\"}", "2000 {\"data\":\"2\"}", "3000 {\"data\":\"3\"}"), got);
        }
        try (var l = Files.list(bag)) {
            assertEquals(before, l.map(p -> p.getFileName().toString()).sorted().toList(), "nothing written beside the bag");
        }
        // and a bag read immutable leaves its folder as it was
        Path talker = copyBag("rosbag2-sqlite3/talker", "talker_ro");
        Ingest.read(talker);
        try (var l = Files.list(talker)) {
            assertEquals(List.of("metadata.yaml", "talker.db3"), l.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }

    private Path copyBag(String shared, String name) throws IOException {
        Path from = SharedData.data(shared);
        Path to = Files.createDirectories(tmp.resolve(name));
        try (var s = Files.list(from)) {
            for (Path p : s.toList()) {
                Files.copy(p, to.resolve(p.getFileName()));
                to.resolve(p.getFileName()).toFile().setWritable(true);
            }
        }
        return to;
    }

    private static void rewriteMetadata(Path bag, String from, String to) throws IOException {
        Path m = bag.resolve("metadata.yaml");
        String s = Files.readString(m, StandardCharsets.UTF_8);
        assertTrue(s.contains(from), "metadata.yaml holds " + from);
        Files.writeString(m, s.replace(from, to));
    }
}
