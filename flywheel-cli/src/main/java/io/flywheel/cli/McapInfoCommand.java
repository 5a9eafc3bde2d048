package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.mcap.McapSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code flywheel mcap info FILE}: what a recording holds. */
@Command(name = "info", mixinStandardHelpOptions = true,
        description = "Profile, library, time span, compression, per-channel counts and rates, schemas,"
                + " attachments and metadata of an MCAP file; bag, files, span, per-topic counts and rates of a rosbag2"
                + " sqlite3 bag.")
final class McapInfoCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "MCAP file, or a rosbag2 sqlite3 bag (its folder or a .db3)")
    Path file;

    @picocli.CommandLine.Mixin
    JsonOutput json;

    @Override
    public Integer call() throws Exception {
        if (Rosbag2Inspect.applies(file)) return Rosbag2Inspect.info(file, json.enabled());
        McapSummary s = McapSummary.of(file);
        PrintStream out = System.out;
        for (io.flywheel.mcap.McapStreamReader.Problem p : s.problems()) {
            System.err.println("flywheel mcap info: " + file + " at byte " + p.offset() + ": " + p.message());
        }
        if (json.enabled()) {
            Json.print(out, s);
            return s.complete() ? 0 : 1;
        }
        out.printf(Locale.ROOT, "file:        %s (%,d bytes)%n", s.file(), s.bytes());
        out.printf(Locale.ROOT, "profile:     %s%n", s.profile().isEmpty() ? "(none)" : s.profile());
        out.printf(Locale.ROOT, "library:     %s%n", s.library());
        out.printf(Locale.ROOT, "messages:    %,d%n", s.messageCount());
        if (s.messageCount() > 0) {
            out.printf(Locale.ROOT, "duration:    %.3f s%n", s.durationNanos() / 1e9);
            out.printf(Locale.ROOT, "start:       %s (%d)%n", instant(s.startTime()), s.startTime());
            out.printf(Locale.ROOT, "end:         %s (%d)%n", instant(s.endTime()), s.endTime());
        }
        if (!s.chunks().isEmpty()) {
            out.println("compression:");
            for (Map.Entry<String, McapSummary.ChunkStats> e : s.chunks().entrySet()) {
                McapSummary.ChunkStats c = e.getValue();
                out.printf(Locale.ROOT, "  %-6s %d chunk(s), %,d -> %,d bytes (%.1f%%)%n",
                        e.getKey().isEmpty() ? "none" : e.getKey(), c.count(), c.uncompressedBytes(),
                        c.compressedBytes(), 100.0 * c.compressedBytes() / Math.max(1, c.uncompressedBytes()));
            }
        }
        out.println("channels:");
        int topicWidth = s.channels().stream().mapToInt(c -> c.topic().length()).max().orElse(5);
        for (McapSummary.ChannelInfo c : s.channels()) {
            out.printf(Locale.ROOT, "  (%d) %-" + topicWidth + "s %8d msgs (%7.2f Hz) : %s [%s]%n", c.id(), c.topic(),
                    c.messageCount(), c.frequencyHz(), c.schemaName().isEmpty() ? "(no schema)" : c.schemaName(),
                    c.messageEncoding());
        }
        out.println("schemas:");
        for (McapSummary.SchemaInfo sc : s.schemas()) {
            out.printf(Locale.ROOT, "  (%d) %s [%s, %d bytes]%n", sc.id(), sc.name(), sc.encoding(), sc.bytes());
        }
        if (!s.attachments().isEmpty()) {
            out.println("attachments:");
            for (McapSummary.AttachmentInfo a : s.attachments()) {
                out.printf(Locale.ROOT, "  %s [%s, %,d bytes]%n", a.name(), a.mediaType(), a.bytes());
            }
        }
        if (!s.metadata().isEmpty()) {
            out.println("metadata:");
            for (McapSummary.MetadataInfo m : s.metadata()) {
                out.printf(Locale.ROOT, "  %s: %s%n", m.name(), m.entries());
            }
        }
        if (!s.indexed()) {
            out.println(s.complete() ? "note: the file has no summary section; it was scanned front to back"
                    : "note: the file is damaged (see above); these numbers cover what could be read"
                    + " (`flywheel mcap doctor` says more, `flywheel mcap recover` salvages it)");
        }
        return s.complete() ? 0 : 1;
    }

    private static String instant(long ns) {
        return Instant.ofEpochSecond(Math.floorDiv(ns, 1_000_000_000L), Math.floorMod(ns, 1_000_000_000L)).toString();
    }
}
