package io.flywheel.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.ingest.Ingest;
import io.flywheel.ingest.Rosbag2SqliteBag;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.mcap.McapWriter;
import io.flywheel.mcap.MessageView;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * The rosbag2 sqlite3 reader ({@link Rosbag2SqliteBag}, sqlite-jdbc) against Flywheel's MCAP reader on the same
 * messages, in one JVM, the two taking turns each round:
 * <ul>
 *   <li>the real twins of {@code ../shared/data} (talker: 20 messages, cdr_test: 7), each read whole
 *       (open, every message, decoded, close) {@code passes} times per round;</li>
 *   <li>a generated recording of {@code messages} JointState messages (7 joints, 500 Hz, as a robot arm publishes
 *       them), written once as a rosbag2 sqlite3 bag (Humble's schema) and as MCAP with uncompressed chunks and
 *       with zstd chunks; each read whole with decoding, and ingested ({@link Ingest#read}).</li>
 * </ul>
 * Prints one line per case and reader (median time of the rounds, messages per second) and the ratio
 * sqlite3 / MCAP.
 *
 * <p>usage: {@code Rosbag2SqliteBench SHARED_DATA SCRATCH [ROUNDS] [MESSAGES] [PASSES]}
 */
public final class Rosbag2SqliteBench {
    private Rosbag2SqliteBench() {}

    interface Pass {
        long run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Path shared = Path.of(args[0]);
        Path scratch = Path.of(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
        int messages = args.length > 3 ? Integer.parseInt(args[3]) : 200_000;
        int passes = args.length > 4 ? Integer.parseInt(args[4]) : 200;
        Files.createDirectories(scratch);
        Path gen = scratch.resolve("joints_" + messages);
        Path bag = gen.resolve("sqlite3");
        Path none = gen.resolve("joints_none.mcap");
        Path zstd = gen.resolve("joints_zstd.mcap");
        if (!Files.isRegularFile(bag.resolve("metadata.yaml")) || !Files.isRegularFile(zstd)) {
            System.err.println("writing " + messages + " JointState messages as sqlite3 and MCAP into " + gen);
            write(gen, bag, none, zstd, messages);
        }
        System.out.printf(Locale.ROOT, "# rounds %d, JVM %s, %d core(s); sizes: sqlite3 %,d B, MCAP none %,d B, MCAP zstd %,d B%n",
                rounds, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                Files.size(bag.resolve("joints_0.db3")), Files.size(none), Files.size(zstd));
        Path talker = shared.resolve("rosbag2-sqlite3/talker");
        Path talkerMcap = shared.resolve("mcap-real/ros2-rosbag2/talker/talker.mcap");
        Path cdr = shared.resolve("rosbag2-sqlite3/cdr_test");
        Path cdrMcap = shared.resolve("mcap-real/ros2-rosbag2/cdr_test/cdr_test_0.mcap");
        Map<String, List<Long>> times = new HashMap<>();
        Map<String, Long> counts = new HashMap<>();
        Map<String, Pass> work = new java.util.LinkedHashMap<>();
        work.put("talker decode x" + passes + "|sqlite3", () -> repeat(passes, () -> readSqlite(talker)));
        work.put("talker decode x" + passes + "|mcap", () -> repeat(passes, () -> readMcap(talkerMcap, true)));
        work.put("cdr_test decode x" + passes + "|sqlite3", () -> repeat(passes, () -> readSqlite(cdr)));
        work.put("cdr_test decode x" + passes + "|mcap", () -> repeat(passes, () -> readMcap(cdrMcap, true)));
        work.put("joints read+decode|sqlite3", () -> readSqlite(bag));
        work.put("joints read+decode|mcap none", () -> readMcap(none, true));
        work.put("joints read+decode|mcap zstd", () -> readMcap(zstd, true));
        work.put("joints ingest|sqlite3", () -> Ingest.read(bag).episodes().get(0).messageCount());
        work.put("joints ingest|mcap none", () -> Ingest.read(none).episodes().get(0).messageCount());
        work.put("joints ingest|mcap zstd", () -> Ingest.read(zstd).episodes().get(0).messageCount());
        for (int r = -1; r < rounds; r++) { // round -1 warms up
            for (Map.Entry<String, Pass> e : work.entrySet()) {
                long t0 = System.nanoTime();
                long n = e.getValue().run();
                long dt = System.nanoTime() - t0;
                if (r >= 0) {
                    times.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(dt);
                    counts.put(e.getKey(), n);
                }
            }
        }
        Map<String, Double> median = new HashMap<>();
        System.out.println("| case | reader | messages | median ms | messages/s |");
        System.out.println("|---|---|---:|---:|---:|");
        for (String k : work.keySet()) {
            long[] t = times.get(k).stream().mapToLong(Long::longValue).sorted().toArray();
            double ms = t[t.length / 2] / 1e6;
            median.put(k, ms);
            String[] p = k.split("\\|");
            System.out.printf(Locale.ROOT, "| %s | %s | %,d | %.1f | %,.0f |%n", p[0], p[1], counts.get(k), ms,
                    counts.get(k) / (ms / 1e3));
        }
        System.out.println();
        System.out.println("| case | sqlite3 / MCAP time |");
        System.out.println("|---|---:|");
        for (String k : work.keySet()) {
            if (!k.endsWith("|sqlite3")) continue;
            String c = k.substring(0, k.indexOf('|'));
            for (String other : work.keySet()) {
                if (other.startsWith(c + "|mcap")) {
                    System.out.printf(Locale.ROOT, "| %s vs %s | %.2f |%n", c, other.substring(other.indexOf('|') + 1),
                            median.get(k) / median.get(other));
                }
            }
        }
    }

    static long repeat(int n, Pass p) throws Exception {
        long total = 0;
        for (int i = 0; i < n; i++) total += p.run();
        return total;
    }

    /** Opens the bag, decodes every message with its topic's decoder; returns the message count. */
    static long readSqlite(Path path) throws IOException {
        long[] n = {0};
        try (Rosbag2SqliteBag bag = Rosbag2SqliteBag.open(path)) {
            Map<String, MessageDecoder> dec = new HashMap<>();
            for (Rosbag2SqliteBag.Topic t : bag.topics()) {
                try {
                    dec.put(t.name(), bag.decoder(t.name()));
                } catch (IOException e) {
                    // undecodable: counted, not decoded
                }
            }
            bag.messages(null, Long.MIN_VALUE, Long.MAX_VALUE, m -> {
                MessageDecoder d = dec.get(m.topic().name());
                if (d != null) {
                    try {
                        Object tree = d.decode(m.data());
                        if (tree == null) throw new IllegalStateException();
                    } catch (io.flywheel.decode.DecodeException e) {
                        throw new IOException(e);
                    }
                }
                n[0]++;
            });
        }
        return n[0];
    }

    /** Opens the MCAP, decodes every message with its schema; returns the message count. */
    static long readMcap(Path file, boolean decode) throws Exception {
        long n = 0;
        Map<Integer, MessageDecoder> dec = new HashMap<>();
        try (McapMessages r = McapMessages.open(file, McapIndexedReader.ReadOptions.builder().build())) {
            MessageView v;
            while ((v = r.next()) != null) {
                if (decode && v.schema() != null) {
                    MessageDecoder d = dec.get(v.channel().id());
                    if (d == null) {
                        ByteBuffer s = v.schema().data().duplicate();
                        byte[] b = new byte[s.remaining()];
                        s.get(b);
                        try {
                            d = Decoders.forSchema(v.channel().messageEncoding(), v.schema().name(), v.schema().encoding(), b);
                        } catch (io.flywheel.decode.DecodeException e) {
                            d = null;
                        }
                        if (d != null) dec.put(v.channel().id(), d);
                    }
                    if (d != null && d.decode(v.message().data()) == null) throw new IllegalStateException();
                }
                n++;
            }
        }
        return n;
    }

    /** The same JointState messages into a sqlite3 bag (rosbag2 Humble schema) and two MCAP files. */
    static void write(Path gen, Path bag, Path none, Path zstd, int messages) throws Exception {
        Files.createDirectories(bag);
        Files.deleteIfExists(bag.resolve("joints_0.db3"));
        List<String> names = List.of("joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6", "joint_7");
        long t0 = 1_700_000_000_000_000_000L;
        long period = 2_000_000L; // 500 Hz
        CdrWriter w = new CdrWriter(256);
        McapWriter mn = McapWriter.builder().profile("ros2").compression(McapWriter.Compression.NONE).build(none);
        McapWriter mz = McapWriter.builder().profile("ros2").compression(McapWriter.Compression.ZSTD).build(zstd);
        byte[] schema = Ros2Schemas.JOINT_STATE.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int cn = mn.registerChannel("/joint_states", "cdr", mn.registerSchema(Ros2Schemas.JOINT_STATE_NAME, "ros2msg", schema), Map.of());
        int cz = mz.registerChannel("/joint_states", "cdr", mz.registerSchema(Ros2Schemas.JOINT_STATE_NAME, "ros2msg", schema), Map.of());
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + bag.resolve("joints_0.db3"))) {
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA journal_mode=MEMORY");
                s.execute("PRAGMA synchronous=OFF");
                s.execute("CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL)");
                s.execute("INSERT INTO schema VALUES (3, 'humble')");
                s.execute("CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL)");
                s.execute("CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,"
                        + "serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL)");
                s.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL,"
                        + " data BLOB NOT NULL)");
                s.execute("CREATE INDEX timestamp_idx ON messages (timestamp ASC)");
                s.execute("INSERT INTO topics VALUES (1, '/joint_states', 'sensor_msgs/msg/JointState', 'cdr', '')");
            }
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO messages (topic_id, timestamp, data) VALUES (1, ?, ?)")) {
                for (int i = 0; i < messages; i++) {
                    long t = t0 + i * period;
                    double[] pos = new double[7];
                    double[] vel = new double[7];
                    double[] eff = new double[7];
                    for (int j = 0; j < 7; j++) {
                        pos[j] = Math.sin(i * 1e-3 + j);
                        vel[j] = Math.cos(i * 1e-3 + j);
                        eff[j] = 0.1 * j;
                    }
                    w.reset().header(t - 300_000L, "base_link").stringSequence(names).float64Sequence(pos)
                            .float64Sequence(vel).float64Sequence(eff);
                    byte[] data = w.toByteArray();
                    ps.setLong(1, t);
                    ps.setBytes(2, data);
                    ps.addBatch();
                    mn.writeMessage(cn, i, t, t, data);
                    mz.writeMessage(cz, i, t, t, data);
                    if (i % 10_000 == 9_999) ps.executeBatch();
                }
                ps.executeBatch();
            }
            c.commit();
        }
        mn.close();
        mz.close();
        long dur = (messages - 1) * period;
        Files.writeString(bag.resolve("metadata.yaml"), String.format(Locale.ROOT, """
                rosbag2_bagfile_information:
                  version: 5
                  storage_identifier: sqlite3
                  duration:
                    nanoseconds: %d
                  starting_time:
                    nanoseconds_since_epoch: %d
                  message_count: %d
                  topics_with_message_count:
                    - topic_metadata:
                        name: /joint_states
                        type: sensor_msgs/msg/JointState
                        serialization_format: cdr
                        offered_qos_profiles: ""
                      message_count: %d
                  compression_format: ""
                  compression_mode: ""
                  relative_file_paths:
                    - joints_0.db3
                  files:
                    - path: joints_0.db3
                      starting_time:
                        nanoseconds_since_epoch: %d
                      duration:
                        nanoseconds: %d
                      message_count: %d
                """, dur, t0, messages, messages, t0, dur, messages));
    }
}
