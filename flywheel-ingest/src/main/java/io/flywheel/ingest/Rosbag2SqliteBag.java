package io.flywheel.ingest;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStream;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrDecoder;

/**
 * A rosbag2 recording in the sqlite3 storage (the default storage through ROS 2 Humble): a folder with
 * {@code metadata.yaml} ({@link Rosbag2Metadata}, versions 4..9) and one or more SQLite files ({@code *.db3}; a
 * split bag has several), read through the SQLite JDBC driver (xerial sqlite-jdbc), read-only: the files are
 * never written: SQLite opens them immutable (no lock, journal, WAL or shm file beside them); a file with a
 * non-empty WAL beside it (a recorder stopped before its last checkpoint) is read from a scratch copy of both.
 *
 * <p>Each storage file holds the tables of rosbag2's {@code rosbag2_storage_default_plugins}
 * ({@code sqlite_storage.cpp}): {@code topics(id, name, type, serialization_format, offered_qos_profiles[,
 * type_description_hash])} (ids are per file), {@code messages(id, topic_id, timestamp, data)} ({@code timestamp}:
 * the receive (log) time, int64 ns; {@code data}: the serialized CDR message), and from Iron on
 * {@code message_definitions(topic_type, encoding, encoded_message_definition, type_description_hash)},
 * {@code schema} and {@code metadata}. Messages are read file by file in the metadata's order, each file in
 * {@code timestamp} then {@code id} order (the order rosbag2's sequential reader gives).
 *
 * <p>Message definitions: the bag's own ({@code message_definitions}, encoding {@code ros2msg} or
 * {@code ros2idl}) when it has one for the type; otherwise the built-in definition ({@link Ros2Schemas#builtIn}).
 * A bag definition that leaves more than 3 bytes (CDR padding) of the topic's first message unread, or fails on
 * it, is taken as wrong when the built-in one decodes that message exactly; the substitution is said in
 * {@link #notes()}. A type with neither is an error naming the file, the topic and what was expected.
 *
 * <p>Compression ({@code compression_format: zstd}): {@code compression_mode: MESSAGE} (each message's data is a
 * zstd frame) is decompressed per message; {@code FILE} (each storage file compressed whole, {@code *.db3.zstd})
 * is decompressed to a scratch file in {@code java.io.tmpdir}, removed by {@link #close()}.
 *
 * <p>Not thread-safe; one JDBC connection per storage file, opened once.
 */
public final class Rosbag2SqliteBag implements AutoCloseable {
    /** The first 16 bytes of every SQLite 3 database file (SQLite file format, section 1.3). */
    static final byte[] SQLITE_MAGIC = "SQLite format 3\0".getBytes(StandardCharsets.ISO_8859_1);
    /** Bytes of CDR alignment padding a serializer may leave after a message's last field. */
    static final int CDR_PADDING = 3;

    /**
     * One topic of the bag.
     *
     * @param name topic name
     * @param type ROS 2 type, {@code pkg/msg/Name}
     * @param serializationFormat {@code cdr}
     * @param offeredQosProfiles QoS profiles as YAML text, {@code ""} when not recorded
     * @param typeDescriptionHash REP-2011 hash, {@code ""} when not recorded
     */
    public record Topic(String name, String type, String serializationFormat, String offeredQosProfiles,
                        String typeDescriptionHash) {}

    /**
     * A message definition used for a type.
     *
     * @param type the ROS 2 type
     * @param encoding {@code ros2msg} or {@code ros2idl}
     * @param text the definition (root type, then dependencies after {@code ====} lines)
     * @param source {@code bag} (the message_definitions table) or {@code built-in}
     */
    public record Definition(String type, String encoding, String text, String source) {}

    /**
     * One message.
     *
     * @param topic the topic
     * @param logTimeNs receive time, int64 ns (the {@code timestamp} column)
     * @param data the serialized message (decompressed), position 0, little-endian order
     * @param file the storage file it is in
     * @param rowId its {@code messages.id} in that file
     */
    public record Message(Topic topic, long logTimeNs, ByteBuffer data, Path file, long rowId) {}

    /** Receives messages. */
    @FunctionalInterface
    public interface MessageHandler {
        /** @throws IOException to stop reading with that error */
        void accept(Message m) throws IOException;
    }

    private final Path folder;
    private final Path metadataFile;
    /** metadata.yaml's, else (a lone .db3) its metadata table's, read in {@link #openFiles} */
    private Rosbag2Metadata metadata;
    private final List<Path> files;
    private final List<Path> readable = new ArrayList<>();
    private final List<Path> scratch = new ArrayList<>();
    private final List<Connection> connections = new ArrayList<>();
    /** per file: topic id to topic */
    private final List<Map<Long, Topic>> topicIds = new ArrayList<>();
    private final Map<String, Topic> topics = new LinkedHashMap<>();
    private final Map<String, Definition> bagDefinitions = new LinkedHashMap<>();
    private final Map<String, MessageDecoder> decoders = new LinkedHashMap<>();
    private final Map<String, Definition> used = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();

    private Rosbag2SqliteBag(Path folder, Path metadataFile, Rosbag2Metadata metadata, List<Path> files) {
        this.folder = folder;
        this.metadataFile = metadataFile;
        this.metadata = metadata;
        this.files = List.copyOf(files);
    }

    /**
     * @param file a file
     * @return whether it starts with the SQLite 3 magic ({@code "SQLite format 3\0"})
     * @throws IOException when it cannot be read
     */
    public static boolean isSqlite(Path file) throws IOException {
        if (!Files.isRegularFile(file)) return false;
        byte[] head = new byte[16];
        int n;
        try (InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(head, 0, 16);
        }
        return n == 16 && java.util.Arrays.equals(head, SQLITE_MAGIC);
    }

    /**
     * @param folder a folder
     * @return whether it holds a metadata.yaml whose storage_identifier is {@code sqlite3}
     */
    public static boolean isSqliteBagFolder(Path folder) {
        Path meta = folder.resolve("metadata.yaml");
        if (!Files.isRegularFile(meta)) return false;
        try {
            return "sqlite3".equals(Rosbag2Metadata.read(meta).storageIdentifier());
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The storage files of the bag a path names, without opening them.
     *
     * @param path a bag folder (with metadata.yaml), or a {@code .db3} file (its bag: the metadata.yaml beside it
     *     when that lists it, else the file alone)
     * @return the bag folder, its metadata file (null for a lone .db3) and files, in recording order
     * @throws IngestException when metadata.yaml is missing or broken, names missing files or another storage
     */
    static Sources.Source locate(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            Path meta = path.resolve("metadata.yaml");
            if (!Files.isRegularFile(meta)) {
                throw new IngestException(meta.toString(), -1, "missing: a rosbag2 folder needs its metadata.yaml"
                        + " (the storage files and their order); expected it beside the .db3 files");
            }
            Rosbag2Metadata md = Rosbag2Metadata.read(meta);
            return new Sources.Source(SourceFormat.ROSBAG2_SQLITE3, path, filesOf(path, meta, md));
        }
        Path dir = path.toAbsolutePath().getParent();
        Path meta = dir.resolve("metadata.yaml");
        if (Files.isRegularFile(meta)) {
            Rosbag2Metadata md = Rosbag2Metadata.read(meta);
            List<Path> listed = filesOf(path.getParent() == null ? dir : path.getParent(), meta, md);
            for (Path f : listed) {
                if (Files.isSameFile(f, path)) {
                    return new Sources.Source(SourceFormat.ROSBAG2_SQLITE3, f.getParent(), listed);
                }
            }
        }
        return new Sources.Source(SourceFormat.ROSBAG2_SQLITE3, path, List.of(path));
    }

    private static List<Path> filesOf(Path folder, Path meta, Rosbag2Metadata md) throws IngestException {
        if (!md.storageIdentifier().equals("sqlite3")) {
            throw new IngestException(meta.toString(), -1, "storage_identifier is '" + md.storageIdentifier()
                    + "'; expected sqlite3 here");
        }
        if (md.files().isEmpty()) {
            throw new IngestException(meta.toString(), -1, "names no files (relative_file_paths or files[].path)");
        }
        List<Path> out = new ArrayList<>();
        for (String rel : md.files()) {
            Path f = folder.resolve(rel);
            if (!Files.isRegularFile(f)) {
                // rosbag2 versions before 5 wrote the bag folder's name in front of each file
                Path alt = folder.resolve(Path.of(rel).getFileName().toString());
                if (!Files.isRegularFile(alt)) {
                    throw new IngestException(meta.toString(), -1, "names file " + rel + ", which does not exist in "
                            + folder);
                }
                f = alt;
            }
            out.add(f);
        }
        return out;
    }

    /**
     * Opens a bag.
     *
     * @param path a bag folder or a {@code .db3} file (see {@link #locate})
     * @return the open bag
     * @throws IngestException when metadata.yaml is missing (and the lone .db3 has no metadata table) or broken, a
     *     storage file is not SQLite, is truncated (names the byte where it ends and the size its header declares) or
     *     corrupt, or lacks the rosbag2 tables
     * @throws IOException when reading fails
     */
    public static Rosbag2SqliteBag open(Path path) throws IOException {
        return open(locate(path));
    }

    /** Opens a located bag ({@link #locate}). */
    static Rosbag2SqliteBag open(Sources.Source source) throws IOException {
        Path root = source.root();
        Path meta = Files.isDirectory(root) ? root.resolve("metadata.yaml") : null;
        Rosbag2Metadata md = meta != null ? Rosbag2Metadata.read(meta) : null;
        Rosbag2SqliteBag bag = new Rosbag2SqliteBag(Files.isDirectory(root) ? root : root.toAbsolutePath().getParent(),
                meta, md, source.files());
        try {
            bag.openFiles();
        } catch (IOException | RuntimeException e) {
            bag.close();
            throw e;
        }
        return bag;
    }

    private void openFiles() throws IOException {
        boolean fileCompressed = metadata != null && metadata.fileCompressed();
        for (Path f : files) {
            Path db = f;
            if (fileCompressed || f.getFileName().toString().endsWith(".zstd")) {
                db = decompressToScratch(f);
            }
            checkHeader(db, f);
            readable.add(db);
            Connection c = connect(db, f);
            connections.add(c);
            Map<Long, Topic> ids = new LinkedHashMap<>();
            List<String> tables = tables(c, f);
            for (String t : List.of("topics", "messages")) {
                if (!tables.contains(t)) {
                    throw new IngestException(f.toString(), -1, "has no table '" + t + "' (its tables: "
                            + (tables.isEmpty() ? "none" : String.join(", ", tables))
                            + "); expected rosbag2 sqlite3 storage with tables topics and messages");
                }
            }
            boolean hashColumn = columns(c, "topics", f).contains("type_description_hash");
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, name, type,"
                    + " serialization_format, offered_qos_profiles" + (hashColumn ? ", type_description_hash" : "")
                    + " FROM topics ORDER BY id")) {
                while (rs.next()) {
                    Topic t = new Topic(rs.getString(2), rs.getString(3), rs.getString(4),
                            nonNull(rs.getString(5)), hashColumn ? nonNull(rs.getString(6)) : "");
                    Topic known = topics.get(t.name());
                    if (known != null && !known.type().equals(t.type())) {
                        throw new IngestException(f.toString(), -1, "topic " + t.name() + " has type " + t.type()
                                + " here but " + known.type() + " in an earlier file of the bag; expected one type per topic");
                    }
                    if (known == null) topics.put(t.name(), t);
                    ids.put(rs.getLong(1), known == null ? t : known);
                }
            } catch (SQLException e) {
                throw sqlError(f, "reading table topics", e);
            }
            topicIds.add(ids);
            if (tables.contains("message_definitions")) {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                        "SELECT topic_type, encoding, encoded_message_definition FROM message_definitions ORDER BY id")) {
                    while (rs.next()) {
                        String type = rs.getString(1);
                        String enc = nonNull(rs.getString(2));
                        String text = nonNull(rs.getString(3));
                        if ((enc.equals("ros2msg") || enc.equals("ros2idl")) && !text.isBlank()) {
                            bagDefinitions.putIfAbsent(type, new Definition(type, enc, text, "bag"));
                        }
                    }
                } catch (SQLException e) {
                    throw sqlError(f, "reading table message_definitions", e);
                }
            }
            if (metadata == null && tables.contains("metadata")) {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                        "SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1")) {
                    if (rs.next()) metadata = Rosbag2Metadata.parse(f + " (table metadata)", rs.getString(1), false);
                } catch (SQLException e) {
                    throw sqlError(f, "reading table metadata", e);
                }
            }
        }
        if (metadata == null) {
            Path f = files.get(0);
            throw new IngestException(f.toAbsolutePath().getParent().resolve("metadata.yaml").toString(), -1,
                    "missing, and " + f.getFileName() + " has no metadata table (rosbag2 before Iron keeps the bag's"
                            + " metadata only in metadata.yaml); expected the bag folder with its metadata.yaml");
        }
    }

    /** @return the bag folder (the .db3's folder for a lone file) */
    public Path folder() {
        return folder;
    }

    /** @return metadata.yaml, or null when the metadata came from a lone .db3's metadata table */
    public Path metadataFile() {
        return metadataFile;
    }

    /** @return the metadata (metadata.yaml, or a lone .db3's metadata table) */
    public Rosbag2Metadata metadata() {
        return metadata;
    }

    /** @return the storage files, in recording order */
    public List<Path> files() {
        return files;
    }

    /** @return the topics, in the order the storage files declare them */
    public List<Topic> topics() {
        return List.copyOf(topics.values());
    }

    /** @return what was guessed while reading (definitions substituted, ...), in order */
    public List<String> notes() {
        return List.copyOf(notes);
    }

    /** @return the definition used for each type decoded so far */
    public Map<String, Definition> definitionsUsed() {
        return Map.copyOf(used);
    }

    /**
     * @return messages per topic in all files (a {@code COUNT} per topic id; no message is read)
     * @throws IOException when a file is corrupt
     */
    public Map<String, Long> messageCounts() throws IOException {
        Map<String, Long> out = new LinkedHashMap<>();
        for (Topic t : topics.values()) out.put(t.name(), 0L);
        for (int i = 0; i < connections.size(); i++) {
            try (Statement s = connections.get(i).createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT topic_id, COUNT(*) FROM messages GROUP BY topic_id")) {
                while (rs.next()) {
                    Topic t = topicOf(i, rs.getLong(1));
                    out.merge(t.name(), rs.getLong(2), Long::sum);
                }
            } catch (SQLException e) {
                throw sqlError(files.get(i), "counting messages", e);
            }
        }
        return out;
    }

    /**
     * @return {first, last} log time of all messages, ns ({0, 0} for an empty bag), from the timestamp index
     * @throws IOException when a file is corrupt
     */
    public long[] logTimeSpan() throws IOException {
        long lo = Long.MAX_VALUE;
        long hi = Long.MIN_VALUE;
        for (int i = 0; i < connections.size(); i++) {
            try (Statement s = connections.get(i).createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT MIN(timestamp), MAX(timestamp), COUNT(*) FROM messages")) {
                if (rs.next() && rs.getLong(3) > 0) {
                    lo = Math.min(lo, rs.getLong(1));
                    hi = Math.max(hi, rs.getLong(2));
                }
            } catch (SQLException e) {
                throw sqlError(files.get(i), "reading message times", e);
            }
        }
        return lo == Long.MAX_VALUE ? new long[] {0, 0} : new long[] {lo, hi};
    }

    /**
     * Runs SQLite's {@code PRAGMA quick_check} on every storage file (reads every page; O(file size)).
     *
     * @return per file, {@code "ok"} or SQLite's findings joined by {@code "; "}
     */
    public Map<Path, String> integrity() {
        Map<Path, String> out = new LinkedHashMap<>();
        for (int i = 0; i < connections.size(); i++) {
            List<String> found = new ArrayList<>();
            try (Statement s = connections.get(i).createStatement(); ResultSet rs = s.executeQuery("PRAGMA quick_check")) {
                while (rs.next()) found.add(rs.getString(1));
            } catch (SQLException e) {
                found = List.of(String.valueOf(e.getMessage()));
            }
            out.put(files.get(i), found.equals(List.of("ok")) ? "ok" : String.join("; ", found));
        }
        return out;
    }

    /**
     * The definition a type is decoded with: the bag's, else the built-in one (before the check against the
     * topic's messages that {@link #decoder} makes).
     *
     * @param type a ROS 2 type
     * @return the definition, or empty when the bag has none and none is built in
     */
    public Optional<Definition> definition(String type) {
        Definition d = bagDefinitions.get(type);
        if (d != null) return Optional.of(d);
        return Ros2Schemas.builtIn(type).map(t -> new Definition(type, Ros2Schemas.ENCODING, t, "built-in"));
    }

    /**
     * The CDR decoder of a topic (cached per topic), checked against the topic's first message.
     *
     * @param topic a topic name of the bag
     * @return the decoder
     * @throws IngestException naming the file, the topic and its type when no definition exists (neither in the
     *     bag nor built in), a definition does not parse, or the serialization format is not {@code cdr}
     * @throws IOException when reading fails
     */
    public MessageDecoder decoder(String topic) throws IOException {
        MessageDecoder d = decoders.get(topic);
        if (d != null) return d;
        Topic t = topics.get(topic);
        if (t == null) {
            throw new io.flywheel.error.NotFoundException("no topic " + topic + " in " + folder + "; its topics: "
                    + String.join(", ", topics.keySet()));
        }
        Path where = fileDeclaring(t);
        if (!t.serializationFormat().equals("cdr")) {
            throw new IngestException(where.toString(), -1, "topic " + topic + " (" + t.type() + ") has serialization"
                    + " format '" + t.serializationFormat() + "'; expected cdr");
        }
        Definition bagDef = bagDefinitions.get(t.type());
        Optional<String> builtIn = Ros2Schemas.builtIn(t.type());
        if (bagDef == null && builtIn.isEmpty()) {
            throw new IngestException(where.toString(), -1, "topic " + topic + " has type " + t.type()
                    + ", which this bag does not define (no message_definitions row for it) and which is not built in;"
                    + " expected a message_definitions row for " + t.type() + " (rosbag2 records one from Iron on) or"
                    + " one of the built-in types " + String.join(", ", Ros2Schemas.builtInTypes()));
        }
        Definition builtInDef = builtIn.map(x -> new Definition(t.type(), Ros2Schemas.ENCODING, x, "built-in")).orElse(null);
        Definition chosen = bagDef != null ? bagDef : builtInDef;
        MessageDecoder dec;
        try {
            dec = compile(chosen);
        } catch (DecodeException e) {
            if (builtInDef == null || chosen == builtInDef) {
                throw new IngestException(where.toString(), -1, "message definition of " + t.type() + " (topic " + topic
                        + ", " + chosen.source() + ") does not parse: " + e.getMessage(), e);
            }
            notes.add("the bag's definition of " + t.type() + " does not parse (" + e.getMessage()
                    + "); using the built-in one");
            chosen = builtInDef;
            dec = compileOrFail(builtInDef, where, topic);
        }
        if (chosen == bagDef && builtInDef != null) {
            ByteBuffer first = firstMessage(t);
            if (first != null && !fits(dec, first)) {
                MessageDecoder alt = compileOrFail(builtInDef, where, topic);
                if (fits(alt, first)) {
                    notes.add("the bag's definition of " + t.type() + " does not match topic " + topic
                            + "'s messages (" + describeFit(dec, first) + "); using the built-in definition");
                    chosen = builtInDef;
                    dec = alt;
                }
            }
        }
        decoders.put(topic, dec);
        used.put(t.type(), chosen);
        return dec;
    }

    private static MessageDecoder compile(Definition d) throws DecodeException {
        return Decoders.forSchema("cdr", d.type(), d.encoding(), d.text().getBytes(StandardCharsets.UTF_8));
    }

    private static MessageDecoder compileOrFail(Definition d, Path where, String topic) throws IngestException {
        try {
            return compile(d);
        } catch (DecodeException e) {
            throw new IngestException(where.toString(), -1, "built-in definition of " + d.type() + " (topic " + topic
                    + ") does not parse: " + e.getMessage(), e);
        }
    }

    private static boolean fits(MessageDecoder dec, ByteBuffer data) {
        if (!(dec instanceof CdrDecoder c)) return true;
        try {
            return c.unreadBytes(data.duplicate()) <= CDR_PADDING;
        } catch (DecodeException e) {
            return false;
        }
    }

    private static String describeFit(MessageDecoder dec, ByteBuffer data) {
        try {
            int unread = ((CdrDecoder) dec).unreadBytes(data.duplicate());
            return "it leaves " + unread + " of the first message's " + data.remaining() + " bytes unread";
        } catch (DecodeException e) {
            return "the first message does not decode with it: " + e.getMessage();
        }
    }

    private Path fileDeclaring(Topic t) {
        for (int i = 0; i < topicIds.size(); i++) {
            if (topicIds.get(i).containsValue(t)) return files.get(i);
        }
        return files.get(0);
    }

    /** @return the data of the topic's first message (decompressed), or null when it has none */
    private ByteBuffer firstMessage(Topic t) throws IOException {
        for (int i = 0; i < connections.size(); i++) {
            for (Map.Entry<Long, Topic> e : topicIds.get(i).entrySet()) {
                if (e.getValue() != t) continue;
                try (PreparedStatement ps = connections.get(i).prepareStatement(
                        "SELECT data FROM messages WHERE topic_id = ? ORDER BY timestamp, id LIMIT 1")) {
                    ps.setLong(1, e.getKey());
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next()) return data(rs.getBytes(1), files.get(i), -1);
                    }
                } catch (SQLException x) {
                    throw sqlError(files.get(i), "reading the first message of " + t.name(), x);
                }
            }
        }
        return null;
    }

    /**
     * Reads messages in recording order: file by file, each by log time then row id.
     *
     * @param only topics to read, null or empty for all
     * @param startNs first log time, inclusive ({@link Long#MIN_VALUE} for no bound)
     * @param endNs last log time, exclusive ({@link Long#MAX_VALUE} for no bound)
     * @param handler receives each message; its data buffer is its own
     * @throws IngestException naming the file when it is corrupt or a message does not decompress
     * @throws IOException what the handler throws
     */
    public void messages(Set<String> only, long startNs, long endNs, MessageHandler handler) throws IOException {
        for (int i = 0; i < connections.size(); i++) {
            Map<Long, Topic> ids = topicIds.get(i);
            List<Long> wanted = new ArrayList<>();
            for (Map.Entry<Long, Topic> e : ids.entrySet()) {
                if (only == null || only.isEmpty() || only.contains(e.getValue().name())) wanted.add(e.getKey());
            }
            if (wanted.isEmpty()) continue;
            StringBuilder sql = new StringBuilder("SELECT id, topic_id, timestamp, data FROM messages WHERE timestamp >= ?"
                    + " AND timestamp < ?");
            if (wanted.size() < ids.size()) {
                sql.append(" AND topic_id IN (");
                for (int k = 0; k < wanted.size(); k++) sql.append(k == 0 ? "?" : ", ?");
                sql.append(')');
            }
            sql.append(" ORDER BY timestamp, id");
            Path f = files.get(i);
            try (PreparedStatement ps = connections.get(i).prepareStatement(sql.toString())) {
                ps.setLong(1, startNs);
                ps.setLong(2, endNs);
                if (wanted.size() < ids.size()) {
                    for (int k = 0; k < wanted.size(); k++) ps.setLong(3 + k, wanted.get(k));
                }
                ps.setFetchSize(1024);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        long row = rs.getLong(1);
                        Topic t = topicOf(i, rs.getLong(2));
                        handler.accept(new Message(t, rs.getLong(3), data(rs.getBytes(4), f, row), f, row));
                    }
                }
            } catch (SQLException e) {
                throw sqlError(f, "reading messages", e);
            }
        }
    }

    private Topic topicOf(int file, long id) throws IngestException {
        Topic t = topicIds.get(file).get(id);
        if (t == null) {
            throw new IngestException(files.get(file).toString(), -1, "a message names topic id " + id
                    + ", which table topics does not define; expected one of " + topicIds.get(file).keySet());
        }
        return t;
    }

    private ByteBuffer data(byte[] bytes, Path file, long row) throws IngestException {
        if (bytes == null) bytes = new byte[0];
        if (metadata != null && metadata.messageCompressed()) {
            try {
                long size = Zstd.getFrameContentSize(bytes);
                if (size >= 0 && size <= Integer.MAX_VALUE - 64) {
                    bytes = Zstd.decompress(bytes, (int) size);
                } else {
                    try (ZstdInputStream in = new ZstdInputStream(new java.io.ByteArrayInputStream(bytes))) {
                        bytes = in.readAllBytes();
                    }
                }
            } catch (RuntimeException | IOException e) {
                throw new IngestException(file.toString(), -1, "message " + (row >= 0 ? "row " + row + " " : "")
                        + "does not decompress (compression_mode MESSAGE, zstd): " + e.getMessage(), e);
            }
        }
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Refuses a file that is not SQLite, or shorter than the pages its header declares. */
    private static void checkHeader(Path db, Path named) throws IOException {
        byte[] h = new byte[100];
        long size = Files.size(db);
        int n;
        try (InputStream in = Files.newInputStream(db)) {
            n = in.readNBytes(h, 0, 100);
        }
        for (int i = 0; i < SQLITE_MAGIC.length; i++) {
            if (n <= i || h[i] != SQLITE_MAGIC[i]) {
                throw new IngestException(named.toString(), 0, "not a SQLite file: expected the magic \"SQLite format 3\\0\""
                        + " of rosbag2 sqlite3 storage; found " + (n == 0 ? "an empty file" : "other bytes"));
            }
        }
        if (n < 100) {
            throw new IngestException(named.toString(), n, "truncated: the file ends inside the 100-byte SQLite header");
        }
        ByteBuffer b = ByteBuffer.wrap(h).order(ByteOrder.BIG_ENDIAN);
        int pageSize = Short.toUnsignedInt(b.getShort(16));
        if (pageSize == 1) pageSize = 65536;
        long pages = Integer.toUnsignedLong(b.getInt(28));
        boolean pagesValid = b.getInt(24) == b.getInt(92) && pages > 0;
        boolean wal = walBytes(db) > 0; // pages past the file's end may be in its WAL
        if (pagesValid && !wal && size < pages * pageSize) {
            throw new IngestException(named.toString(), size, "truncated: the SQLite header declares " + pages
                    + " pages of " + pageSize + " bytes (" + pages * pageSize + " bytes); the file ends at byte " + size);
        }
    }

    /** @return the size of the file's write-ahead log ({@code NAME-wal}), 0 when there is none */
    private static long walBytes(Path db) throws IOException {
        Path wal = db.resolveSibling(db.getFileName() + "-wal");
        return Files.isRegularFile(wal) ? Files.size(wal) : 0;
    }

    private Connection connect(Path db, Path named) throws IOException {
        boolean copied = walBytes(db) > 0;
        if (copied) {
            // a recorder that stopped before its last checkpoint left messages in the WAL: SQLite reads them only
            // through a shared-memory file it creates beside the database, so read a scratch copy of both instead
            Path dir = Files.createTempDirectory("flywheel-rosbag2-");
            scratch.add(dir);
            Path copy = dir.resolve(db.getFileName().toString());
            Files.copy(db, copy);
            Files.copy(db.resolveSibling(db.getFileName() + "-wal"), dir.resolve(db.getFileName() + "-wal"));
            scratch.add(copy);
            scratch.add(dir.resolve(db.getFileName() + "-wal"));
            scratch.add(dir.resolve(db.getFileName() + "-shm"));
            db = copy;
        }
        // immutable: SQLite takes no lock and creates no journal, WAL or shm file next to a raw file
        String url = "jdbc:sqlite:file:" + db.toAbsolutePath().toUri().getRawPath()
                + (copied ? "?mode=ro" : "?immutable=1");
        try {
            org.sqlite.SQLiteConfig cfg = new org.sqlite.SQLiteConfig();
            cfg.setReadOnly(true);
            cfg.setOpenMode(org.sqlite.SQLiteOpenMode.OPEN_URI);
            return DriverManager.getConnection(url, cfg.toProperties());
        } catch (SQLException e) {
            throw sqlError(named, "opening", e);
        }
    }

    private static List<String> tables(Connection c, Path f) throws IngestException {
        List<String> out = new ArrayList<>();
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
            while (rs.next()) out.add(rs.getString(1));
        } catch (SQLException e) {
            throw sqlError(f, "reading its schema", e);
        }
        return out;
    }

    private static List<String> columns(Connection c, String table, Path f) throws IngestException {
        List<String> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA table_info(" + table + ")")) {
            while (rs.next()) out.add(rs.getString("name"));
        } catch (SQLException e) {
            throw sqlError(f, "reading the columns of " + table, e);
        }
        return out;
    }

    static IngestException sqlError(Path f, String doing, SQLException e) {
        String m = String.valueOf(e.getMessage());
        String what = m.contains("SQLITE_CORRUPT") || m.contains("malformed") ? "corrupt (SQLite: " + m + ")"
                : m.contains("SQLITE_NOTADB") || m.contains("not a database") ? "not a SQLite database (SQLite: " + m + ")"
                : "SQLite error: " + m;
        return new IngestException(f.toString(), -1, what + " while " + doing
                + "; expected a rosbag2 sqlite3 storage file (tables topics and messages)", e);
    }

    private Path decompressToScratch(Path f) throws IOException {
        Path tmp = Files.createTempFile("flywheel-rosbag2-", ".db3");
        scratch.add(tmp);
        try (InputStream in = new ZstdInputStream(Files.newInputStream(f))) {
            Files.copy(in, tmp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new IngestException(f.toString(), -1, "does not decompress (compression_mode FILE, zstd): "
                    + e.getMessage(), e);
        }
        return tmp;
    }

    private static String nonNull(String s) {
        return s == null ? "" : s;
    }

    @Override
    public void close() {
        for (Connection c : connections) {
            try {
                c.close();
            } catch (SQLException e) {
                // read-only: nothing to lose
            }
        }
        connections.clear();
        for (int i = scratch.size() - 1; i >= 0; i--) { // files before their folder
            Path p = scratch.get(i);
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                p.toFile().deleteOnExit();
            }
        }
        scratch.clear();
    }
}
