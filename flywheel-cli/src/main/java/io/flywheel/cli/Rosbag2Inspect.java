package io.flywheel.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.core.JsonGenerator;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.JsonTree;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.ingest.IngestException;
import io.flywheel.ingest.Rosbag2Metadata;
import io.flywheel.ingest.Rosbag2SqliteBag;

/**
 * {@code flywheel mcap info} and {@code mcap cat} on a rosbag2 recording in the sqlite3 storage (its folder or one
 * of its {@code .db3} files): the same output shapes as for an MCAP file, from {@link Rosbag2SqliteBag}.
 */
final class Rosbag2Inspect {
    private Rosbag2Inspect() {}

    /**
     * @param path what the user gave
     * @return whether it is a sqlite3 rosbag2 folder (or a folder of {@code .db3} files missing its metadata.yaml) or
     *     a SQLite file
     */
    static boolean applies(Path path) {
        try {
            if (!Files.isDirectory(path)) return Rosbag2SqliteBag.isSqlite(path);
            if (Rosbag2SqliteBag.isSqliteBagFolder(path)) return true;
            // a folder of .db3 files without its metadata.yaml: opening it names what is missing
            try (var names = Files.list(path)) {
                return !Files.exists(path.resolve("metadata.yaml"))
                        && names.anyMatch(p -> p.getFileName().toString().endsWith(".db3"));
            }
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code mcap info}: bag, storage, metadata version, files, span, per-topic counts and rates, definitions. */
    static int info(Path path, boolean json) throws IOException {
        try (Rosbag2SqliteBag bag = Rosbag2SqliteBag.open(path)) {
            Rosbag2Metadata md = bag.metadata();
            Map<String, Long> counts = bag.messageCounts();
            long[] span = bag.logTimeSpan();
            long total = counts.values().stream().mapToLong(Long::longValue).sum();
            List<Map<String, Object>> topics = new ArrayList<>();
            for (Rosbag2SqliteBag.Topic t : bag.topics()) {
                long n = counts.getOrDefault(t.name(), 0L);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("topic", t.name());
                m.put("type", t.type());
                m.put("serialization_format", t.serializationFormat());
                m.put("message_count", n);
                m.put("frequency_hz", n > 1 && span[1] > span[0] ? (n - 1) * 1e9 / (span[1] - span[0]) : 0.0);
                String def;
                try {
                    bag.decoder(t.name()); // checks the bag's definition against the topic's first message
                    def = bag.definitionsUsed().get(t.type()).source();
                } catch (IngestException e) {
                    def = bag.definition(t.type()).map(d -> d.source() + " (unusable: " + e.problem() + ")").orElse("none");
                }
                m.put("definition", def);
                topics.add(m);
            }
            List<Map<String, Object>> files = new ArrayList<>();
            long bytes = 0;
            for (Path f : bag.files()) {
                long b = Files.size(f);
                bytes += b;
                files.add(Map.of("path", f.toString(), "bytes", b));
            }
            if (json) {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("bag", bag.folder().toString());
                o.put("storage", "sqlite3");
                o.put("metadata_version", md.version());
                o.put("ros_distro", md.rosDistro());
                o.put("files", files);
                o.put("bytes", bytes);
                o.put("message_count", total);
                o.put("start_time", span[0]);
                o.put("end_time", span[1]);
                o.put("duration_ns", span[1] - span[0]);
                o.put("compression", md.compressionFormat().isEmpty() ? "none"
                        : md.compressionFormat() + "/" + md.compressionMode().toLowerCase(Locale.ROOT));
                o.put("topics", topics);
                if (total != md.messageCount()) o.put("metadata_message_count", md.messageCount());
                o.put("notes", bag.notes());
                Json.print(System.out, o);
                return 0;
            }
            PrintStream out = System.out;
            out.printf(Locale.ROOT, "bag:         %s (rosbag2 sqlite3, metadata version %d%s)%n", bag.folder(),
                    md.version(), md.rosDistro().isEmpty() ? "" : ", " + md.rosDistro());
            out.printf(Locale.ROOT, "files:       %d (%,d bytes)%n", files.size(), bytes);
            for (Path f : bag.files()) out.printf(Locale.ROOT, "  %s (%,d bytes)%n", f.getFileName(), Files.size(f));
            out.printf(Locale.ROOT, "messages:    %,d%n", total);
            if (total > 0) {
                out.printf(Locale.ROOT, "duration:    %.3f s%n", (span[1] - span[0]) / 1e9);
                out.printf(Locale.ROOT, "start:       %s (%d)%n", instant(span[0]), span[0]);
                out.printf(Locale.ROOT, "end:         %s (%d)%n", instant(span[1]), span[1]);
            }
            out.printf(Locale.ROOT, "compression: %s%n", md.compressionFormat().isEmpty() ? "none"
                    : md.compressionFormat() + " (" + md.compressionMode() + ")");
            out.println("topics:");
            int w = bag.topics().stream().mapToInt(t -> t.name().length()).max().orElse(5);
            for (Map<String, Object> t : topics) {
                out.printf(Locale.ROOT, "  %-" + w + "s %8d msgs (%7.2f Hz) : %s [%s; definition: %s]%n", t.get("topic"),
                        (Long) t.get("message_count"), (Double) t.get("frequency_hz"), t.get("type"),
                        t.get("serialization_format"), t.get("definition"));
            }
            for (String n : bag.notes()) out.println("note: " + n);
            if (total != md.messageCount()) {
                out.printf(Locale.ROOT, "note: metadata.yaml says %,d messages; the files hold %,d%n", md.messageCount(), total);
            }
            return 0;
        }
    }

    /**
     * {@code mcap cat}: JSON lines {@code topic, sequence, log_time, publish_time (the log time), schema, message};
     * rosbag2 sqlite3 keeps no sequence numbers, so {@code sequence} is the message's index on its topic among those
     * printed (what rosbag2's MCAP writer numbers from 0 per topic), in recording order; an undecodable message gets {@code data_base64} and
     * {@code error}, and the exit code is 1.
     */
    static int cat(Path path, List<String> only, Long start, Long end, long limit, boolean json) throws IOException {
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.UTF_8);
        JsonGenerator g = Json.MAPPER.getFactory().createGenerator((java.io.OutputStream) out);
        g.setPrettyPrinter(new com.fasterxml.jackson.core.util.MinimalPrettyPrinter(""));
        long[] printed = {0};
        long[] failed = {0};
        Map<String, Long> perTopic = new LinkedHashMap<>();
        try (Rosbag2SqliteBag bag = Rosbag2SqliteBag.open(path)) {
            Set<String> known = new java.util.TreeSet<>();
            bag.topics().forEach(t -> known.add(t.name()));
            if (only != null && !only.isEmpty()) {
                List<String> unknown = only.stream().filter(t -> !known.contains(t)).toList();
                if (!unknown.isEmpty()) {
                    throw new io.flywheel.error.NotFoundException("no topic " + String.join(", ", unknown) + " in "
                            + bag.folder() + "; its topics: " + String.join(", ", known));
                }
            }
            Map<String, Object> decoders = new HashMap<>();
            final class Stop extends IOException {
                private static final long serialVersionUID = 1L;
            }
            try {
                bag.messages(only == null ? null : Set.copyOf(only), start == null ? Long.MIN_VALUE : start,
                        end == null ? Long.MAX_VALUE : end, m -> {
                            if (printed[0] >= limit) throw new Stop();
                            String topic = m.topic().name();
                            Object dec = decoders.get(topic);
                            if (dec == null) {
                                try {
                                    dec = bag.decoder(topic);
                                } catch (IngestException e) {
                                    dec = e.problem();
                                }
                                decoders.put(topic, dec);
                            }
                            Object value = null;
                            String error = null;
                            if (dec instanceof MessageDecoder d) {
                                try {
                                    value = d.decode(m.data().duplicate());
                                } catch (DecodeException e) {
                                    error = e.getMessage();
                                }
                            } else {
                                error = (String) dec;
                            }
                            if (error != null) failed[0]++;
                            printed[0]++;
                            long sequence = perTopic.merge(topic, 1L, Long::sum) - 1;
                            if (json) {
                                g.writeStartObject();
                                g.writeStringField("topic", topic);
                                g.writeNumberField("sequence", sequence);
                                g.writeNumberField("log_time", m.logTimeNs());
                                g.writeNumberField("publish_time", m.logTimeNs());
                                g.writeStringField("schema", m.topic().type());
                                if (error == null) {
                                    g.writeFieldName("message");
                                    JsonTree.write(g, value);
                                } else {
                                    byte[] b = new byte[m.data().remaining()];
                                    m.data().duplicate().get(b);
                                    g.writeStringField("data_base64", Base64.getEncoder().encodeToString(b));
                                    g.writeStringField("error", error);
                                }
                                g.writeEndObject();
                                g.flush();
                                out.write('\n');
                            } else {
                                out.print(m.logTimeNs());
                                out.print(' ');
                                out.print(topic);
                                out.print(" [" + m.topic().type() + "] ");
                                out.println(error != null ? "<" + error + ">" : McapCatCommand.preview(value));
                            }
                        });
            } catch (Stop s) {
                // --limit reached
            }
            out.flush();
            System.err.println("mcap cat: " + printed[0] + " message(s) from " + perTopic.size() + " topic(s)"
                    + " (rosbag2 sqlite3, " + bag.files().size() + " file(s), log-time order within each file)"
                    + (failed[0] > 0 ? "; " + failed[0] + " could not be decoded" : ""));
        }
        return failed[0] > 0 ? 1 : 0;
    }

    /**
     * {@code mcap doctor}: each file's SQLite integrity ({@code PRAGMA quick_check}), the message counts against
     * metadata.yaml (total and per topic), every topic's definition, and every message of a decodable topic decoded.
     * Errors: a file SQLite finds damaged, a message that does not decode; warnings: counts that differ from the
     * metadata, a topic that cannot be decoded (no definition), a substituted definition.
     */
    static int doctor(Path path, boolean json) throws IOException {
        List<String> errors = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        long[] messages = {0};
        int files = 0;
        try (Rosbag2SqliteBag bag = Rosbag2SqliteBag.open(path)) {
            files = bag.files().size();
            for (Map.Entry<Path, String> e : bag.integrity().entrySet()) {
                if (!e.getValue().equals("ok")) errors.add(e.getKey() + ": SQLite integrity check: " + e.getValue());
            }
            Rosbag2Metadata md = bag.metadata();
            Map<String, Long> counts = bag.messageCounts();
            long total = counts.values().stream().mapToLong(Long::longValue).sum();
            if (md.messageCount() != total) {
                warnings.add("metadata says " + md.messageCount() + " message(s); the files hold " + total);
            }
            for (Rosbag2Metadata.Topic t : md.topics()) {
                Long n = counts.get(t.name());
                if (n == null) {
                    warnings.add("metadata lists topic " + t.name() + ", which no file declares");
                } else if (n != t.messageCount()) {
                    warnings.add("topic " + t.name() + ": metadata says " + t.messageCount() + " message(s); the files hold " + n);
                }
            }
            Map<String, MessageDecoder> decoders = new HashMap<>();
            for (Rosbag2SqliteBag.Topic t : bag.topics()) {
                try {
                    decoders.put(t.name(), bag.decoder(t.name()));
                } catch (IngestException e) {
                    warnings.add("topic " + t.name() + " cannot be decoded: " + e.problem());
                }
            }
            for (String n : bag.notes()) warnings.add(n);
            long[] undecodable = {0};
            bag.messages(null, Long.MIN_VALUE, Long.MAX_VALUE, m -> {
                messages[0]++;
                MessageDecoder d = decoders.get(m.topic().name());
                if (d == null) return;
                try {
                    d.decode(m.data());
                } catch (DecodeException e) {
                    if (undecodable[0]++ < 20) {
                        errors.add(m.file() + ": message " + m.rowId() + " on " + m.topic().name() + " at log time "
                                + m.logTimeNs() + " does not decode: " + e.getMessage());
                    }
                }
            });
            if (undecodable[0] > 20) errors.add("... and " + (undecodable[0] - 20) + " more message(s) that do not decode");
        } catch (IngestException e) {
            errors.add(e.getMessage());
        }
        boolean ok = errors.isEmpty();
        if (json) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("ok", ok);
            o.put("bag", path.toString());
            o.put("storage", "sqlite3");
            o.put("files", files);
            o.put("messages", messages[0]);
            o.put("errors", errors);
            o.put("warnings", warnings);
            Json.print(System.out, o);
        } else {
            for (String e : errors) System.out.println("error: " + e);
            for (String w : warnings) System.out.println("warning: " + w);
            System.out.printf(Locale.ROOT, "%s: %s: rosbag2 sqlite3, %d file(s), %d message(s); %d error(s), %d warning(s)%n",
                    ok ? "ok" : "FAILED", path, files, messages[0], errors.size(), warnings.size());
        }
        return ok ? 0 : 1;
    }

    private static String instant(long ns) {
        return Instant.ofEpochSecond(Math.floorDiv(ns, 1_000_000_000L), Math.floorMod(ns, 1_000_000_000L)).toString();
    }
}
