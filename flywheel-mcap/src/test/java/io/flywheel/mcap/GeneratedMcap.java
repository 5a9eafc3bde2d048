package io.flywheel.mcap;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Writes a deterministic MCAP file whose content is known: 3 channels (two with schemas, one
 * schemaless), 2 attachments and 2 metadata records, and messages whose log times interleave across
 * channels, including equal log times on different channels.
 *
 * <p>Ground truth: channel /a gets messages at log times 1000 + 10*i (i = 0..na-1), /b at
 * 1005 + 10*i, /c (schemaless) at 1000 + 20*i (so every /c time equals an /a time). Messages are
 * written in ascending log time, /a before /c on equal times. Payload sizes cycle through 0, 7, 300
 * and 5000 bytes of seeded random bytes; publish time = log time + 1; sequence = i.
 */
final class GeneratedMcap {
    record Msg(String topic, long sequence, long logTime, long publishTime, byte[] data) {}

    record Att(String name, String mediaType, long logTime, long createTime, byte[] data) {}

    final List<Msg> messages = new ArrayList<>();
    final List<Att> attachments = new ArrayList<>();
    final Map<String, Map<String, String>> metadata = new LinkedHashMap<>();
    final Map<String, Integer> channelIds = new LinkedHashMap<>();
    static final byte[] SCHEMA_A = "int32 x\nstring label\n".getBytes(StandardCharsets.UTF_8);
    static final byte[] SCHEMA_B = "{\"type\":\"object\"}".getBytes(StandardCharsets.UTF_8);

    private GeneratedMcap() {}

    /** Writes the content into {@code w} and closes it. */
    static GeneratedMcap write(McapWriter w, int na) throws IOException {
        GeneratedMcap g = new GeneratedMcap();
        Random rnd = new Random(42);
        int sa = w.registerSchema("pkg/msg/A", "ros2msg", SCHEMA_A);
        int sb = w.registerSchema("pkg.B", "jsonschema", SCHEMA_B);
        Map<String, String> md = new LinkedHashMap<>();
        md.put("offered_qos_profiles", "");
        md.put("ünïcode", "✓");
        g.channelIds.put("/a", w.registerChannel("/a", "cdr", sa, md));
        g.channelIds.put("/b", w.registerChannel("/b", "json", sb, Map.of()));
        g.channelIds.put("/c", w.registerChannel("/c", "raw", 0, Map.of("k", "v")));
        int[] sizes = {0, 7, 300, 5000};
        List<Msg> all = new ArrayList<>();
        for (int i = 0; i < na; i++) {
            all.add(new Msg("/a", i, 1000 + 10L * i, 1001 + 10L * i, bytes(rnd, sizes[i % 4])));
            all.add(new Msg("/b", i, 1005 + 10L * i, 1006 + 10L * i, bytes(rnd, sizes[(i + 1) % 4])));
            if (i % 2 == 0) {
                all.add(new Msg("/c", i / 2, 1000 + 10L * i, 1001 + 10L * i, bytes(rnd, sizes[(i + 2) % 4])));
            }
        }
        // stable sort: /a stays before /c at equal times, as generated
        all.sort(Comparator.comparingLong(Msg::logTime));
        int k = 0;
        for (Msg m : all) {
            int ch = g.channelIds.get(m.topic());
            if (k++ % 2 == 0) {
                w.writeMessage(ch, m.sequence(), m.logTime(), m.publishTime(), m.data());
            } else {
                w.writeMessage(ch, m.sequence(), m.logTime(), m.publishTime(), ByteBuffer.wrap(m.data()));
            }
            if (k == all.size() / 2) {
                g.attach(w, "calib.yaml", "text/yaml", 1500, 1400, "fx: 500\nfy: 500\n".getBytes(StandardCharsets.UTF_8));
                g.meta(w, "episode", Map.of("index", "7"));
            }
        }
        g.messages.addAll(all);
        g.attach(w, "empty.bin", "application/octet-stream", 0, 0, new byte[0]);
        Map<String, String> m2 = new LinkedHashMap<>();
        m2.put("robot", "widowx");
        m2.put("operator", "");
        g.meta(w, "recording", m2);
        w.close();
        return g;
    }

    private void attach(McapWriter w, String name, String type, long log, long create, byte[] data) throws IOException {
        w.writeAttachment(name, type, log, create, data);
        attachments.add(new Att(name, type, log, create, data));
    }

    private void meta(McapWriter w, String name, Map<String, String> m) throws IOException {
        w.writeMetadata(name, m);
        metadata.put(name, m);
    }

    private static byte[] bytes(Random rnd, int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }

    /** @return the messages a reader must yield in log-time order (stable: equal times keep write order) */
    List<Msg> inLogTimeOrder() {
        List<Msg> out = new ArrayList<>(messages);
        out.sort(Comparator.comparingLong(Msg::logTime));
        return out;
    }

    static byte[] toArray(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
