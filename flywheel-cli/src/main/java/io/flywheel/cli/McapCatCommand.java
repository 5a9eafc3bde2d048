package io.flywheel.cli;

import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.core.JsonGenerator;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.Decoders;
import io.flywheel.decode.JsonTree;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.mcap.MessageView;
import io.flywheel.mcap.Record;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code flywheel mcap cat FILE}: decoded messages, one per line. With {@code --json}, each line is
 * a JSON object {@code {"topic", "sequence", "log_time", "publish_time", "schema", "message"}}; times
 * are integer nanoseconds; the message follows {@link JsonTree}'s rules (integers wider than int32
 * as decimal strings, bytes as arrays of numbers, NaN and infinities as strings). A message that
 * cannot be decoded is printed with {@code "data_base64"} and {@code "error"} instead.
 */
@Command(name = "cat", mixinStandardHelpOptions = true,
        description = "Print decoded messages (JSON lines with --json), in log-time order when the file is indexed.")
final class McapCatCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "MCAP file, or a rosbag2 sqlite3 bag (its folder or a .db3)")
    Path file;

    @Option(names = "--topic", paramLabel = "TOPIC", description = "only this topic (repeatable)")
    List<String> topics;

    @Option(names = "--start", paramLabel = "TIME", converter = TimeArg.class,
            description = "first log time, inclusive: ns, seconds (1716800000.25) or ISO-8601")
    Long start;

    @Option(names = "--end", paramLabel = "TIME", converter = TimeArg.class,
            description = "last log time, exclusive: ns, seconds or ISO-8601")
    Long end;

    @Option(names = "--limit", paramLabel = "N", description = "stop after N messages")
    long limit = Long.MAX_VALUE;

    @Option(names = "--json", description = "one JSON object per message")
    boolean json;

    @Override
    public Integer call() throws Exception {
        Usage.require(spec, !(start != null && start < 0 || end != null && end < 0),
                "--start and --end are log times: they cannot be negative");
        Usage.require(spec, start == null || end == null || Long.compareUnsigned(start, end) < 0,
                "--start " + start + " is not before --end " + end);
        Usage.require(spec, limit >= 0, "--limit must be at least 0, got " + limit);
        if (Rosbag2Inspect.applies(file)) return Rosbag2Inspect.cat(file, topics, start, end, limit, json);
        McapIndexedReader.ReadOptions.Builder sel = McapIndexedReader.ReadOptions.builder()
                .topics(topics == null ? List.of() : topics);
        if (start != null) {
            sel.startTime(start);
        }
        if (end != null) {
            sel.endTime(end);
        }
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.UTF_8);
        Map<Integer, Object> decoders = new HashMap<>();
        long printed = 0;
        long failed = 0;
        Map<String, Long> perTopic = new LinkedHashMap<>();
        JsonGenerator g = Json.MAPPER.getFactory().createGenerator((java.io.OutputStream) out);
        g.setPrettyPrinter(new com.fasterxml.jackson.core.util.MinimalPrettyPrinter("")); // no separator between lines' objects
        try (McapMessages messages = McapMessages.open(file, sel.build())) {
            MessageView item;
            while (printed < limit && (item = messages.next()) != null) {
                Record.Channel ch = item.channel();
                Record.Schema schema = item.schema();
                Object dec = decoders.computeIfAbsent(ch.id(), id -> decoderFor(schema, ch));
                Object value = null;
                String error = null;
                if (dec instanceof MessageDecoder d) {
                    try {
                        value = d.decode(item.message().data());
                    } catch (DecodeException e) {
                        error = e.getMessage();
                    }
                } else {
                    error = (String) dec;
                }
                if (error != null) {
                    failed++;
                }
                printed++;
                perTopic.merge(ch.topic(), 1L, Long::sum);
                String schemaName = item.schema() == null ? "" : item.schema().name();
                if (json) {
                    writeJson(g, item, schemaName, value, error);
                    g.flush();
                    out.write('\n');
                } else {
                    out.print(Long.toUnsignedString(item.message().logTime()));
                    out.print(' ');
                    out.print(ch.topic());
                    out.print(" [" + schemaName + "] ");
                    out.println(error != null ? "<" + error + ">" : preview(value));
                }
            }
            out.flush();
            if (printed == 0 && topics != null && !topics.isEmpty()) {
                java.util.Set<String> known = messages.topics();
                List<String> unknown = topics.stream().filter(t -> !known.contains(t)).toList();
                if (!unknown.isEmpty()) {
                    throw new io.flywheel.error.NotFoundException("no topic " + String.join(", ", unknown) + " in " + file
                            + "; its topics: " + String.join(", ", new java.util.TreeSet<>(known)));
                }
            }
            System.err.println("mcap cat: " + printed + " message(s) from " + perTopic.size() + " topic(s)"
                    + (messages.indexed() ? " (indexed, log-time order)" : " (streamed, file order)")
                    + (failed > 0 ? "; " + failed + " could not be decoded" : ""));
        }
        return failed > 0 ? 1 : 0;
    }

    private static Object decoderFor(Record.Schema schema, Record.Channel ch) {
        try {
            if (schema == null) {
                return Decoders.forSchema(ch.messageEncoding(), "", "", new byte[0]);
            }
            ByteBuffer data = schema.data().duplicate();
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            return Decoders.forSchema(ch.messageEncoding(), schema.name(), schema.encoding(), bytes);
        } catch (DecodeException e) {
            return "topic " + ch.topic() + ": " + e.getMessage();
        }
    }

    private static void writeJson(JsonGenerator g, MessageView item, String schemaName, Object value,
                                  String error) throws java.io.IOException {
        Record.Message m = item.message();
        g.writeStartObject();
        g.writeStringField("topic", item.channel().topic());
        g.writeNumberField("sequence", m.sequence());
        g.writeFieldName("log_time");
        g.writeNumber(Long.toUnsignedString(m.logTime()));
        g.writeFieldName("publish_time");
        g.writeNumber(Long.toUnsignedString(m.publishTime()));
        g.writeStringField("schema", schemaName);
        if (error == null) {
            g.writeFieldName("message");
            JsonTree.write(g, value);
        } else {
            ByteBuffer d = m.data().duplicate();
            byte[] bytes = new byte[d.remaining()];
            d.get(bytes);
            g.writeStringField("data_base64", Base64.getEncoder().encodeToString(bytes));
            g.writeStringField("error", error);
        }
        g.writeEndObject();
    }

    /** One-line preview: the JSON of the message, long arrays and strings shortened. */
    static String preview(Object value) {
        String s = JsonTree.toJson(shorten(value));
        return s.length() > 160 ? s.substring(0, 157) + "..." : s;
    }

    private static Object shorten(Object v) {
        if (v instanceof Map<?, ?> m) {
            Map<Object, Object> r = new LinkedHashMap<>();
            m.forEach((k, x) -> r.put(k, shorten(x)));
            return r;
        }
        if (v instanceof List<?> l && l.size() > 8) {
            return "<" + l.size() + " items>";
        }
        if (v instanceof List<?> l) {
            return l.stream().map(McapCatCommand::shorten).toList();
        }
        if (v instanceof byte[] b && b.length > 8) {
            return "<" + b.length + " bytes>";
        }
        if (v instanceof String s && s.length() > 60) {
            return s.substring(0, 57) + "...";
        }
        return v;
    }
}
