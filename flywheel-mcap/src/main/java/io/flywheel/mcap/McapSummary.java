package io.flywheel.mcap;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an MCAP file holds, as {@code flywheel mcap info} shows it: header, time span, chunk
 * compression, per-channel message counts and rates, schemas, attachments and metadata.
 *
 * <p>Schemas, channels, chunks, attachments and metadata come from the summary section when the file
 * has one; message counts and per-channel rates from one pass over the messages. A file without a
 * summary is scanned front to back (no chunk totals then), and a truncated one is summarised up to
 * the break ({@code complete} is false).
 *
 * @param file path as given
 * @param bytes file size in bytes
 * @param profile Header profile, e.g. "ros2"
 * @param library Header library, e.g. "rosbag2"
 * @param indexed whether the summary section was used
 * @param complete false when the file ended early (truncated) and the numbers cover what was read
 * @param messageCount messages in the file
 * @param startTime first log time, ns (0 when there are no messages); on a wall clock (a last log time at or after
 *     {@value #WALL_CLOCK_NS} ns, March 1973) a log time of 0 means "unset" and is left out, so that a few unset
 *     messages do not make a recording start in 1970
 * @param endTime last log time, ns
 * @param zeroLogTimeMessages messages whose log time is 0 (left out of the span and of the rates on a wall clock)
 * @param chunks per compression ("" = none): chunk count, compressed and uncompressed bytes
 * @param channels per channel, ordered by id
 * @param schemas per schema, ordered by id
 * @param attachments attachment name, media type, size, log time
 * @param metadata metadata records by name, with their entries
 * @param problems where a file without a usable summary broke off or was corrupt (empty otherwise)
 */
public record McapSummary(String file, long bytes, String profile, String library, boolean indexed,
                          boolean complete, long messageCount, long startTime, long endTime, long zeroLogTimeMessages,
                          Map<String, ChunkStats> chunks, List<ChannelInfo> channels, List<SchemaInfo> schemas,
                          List<AttachmentInfo> attachments, List<MetadataInfo> metadata,
                          List<McapStreamReader.Problem> problems) {

    /** Chunk totals for one compression. Sizes in bytes. */
    public record ChunkStats(long count, long compressedBytes, long uncompressedBytes) {}

    /** Log times at or after this (ns, March 1973) are on a wall clock, where 0 means "unset". */
    public static final long WALL_CLOCK_NS = 100_000_000_000_000_000L;

    /**
     * One channel; {@code frequencyHz} is (count - 1) / (last - first log time) over the messages with a set log
     * time, 0 below 2 of them.
     */
    public record ChannelInfo(int id, String topic, String messageEncoding, int schemaId, String schemaName,
                              long messageCount, double frequencyHz, Map<String, String> metadata) {}

    /** One schema; {@code bytes} is the size of its data. */
    public record SchemaInfo(int id, String name, String encoding, long bytes) {}

    /** One attachment. */
    public record AttachmentInfo(String name, String mediaType, long bytes, long logTime) {}

    /** One metadata record. */
    public record MetadataInfo(String name, Map<String, String> entries) {}

    /** @return duration between first and last log time, in ns */
    public long durationNanos() {
        return messageCount == 0 ? 0 : endTime - startTime;
    }

    /**
     * @param file the MCAP file
     * @return its summary
     * @throws McapFormatException when it is not an MCAP file at all (bad magic, broken header)
     * @throws IOException when it cannot be read
     */
    public static McapSummary of(Path file) throws IOException {
        McapIndexedReader reader;
        try {
            reader = McapIndexedReader.open(file);
        } catch (McapFormatException e) {
            if (e.offset() <= 0) {
                throw e; // not MCAP at all: the scan would fail the same way
            }
            return scan(file); // no usable summary: read what is there
        }
        try (McapIndexedReader r = reader) {
            return fromIndex(file, r); // a corrupt chunk fails here, naming its offset
        }
    }

    private static final class Acc {
        final Map<Integer, Record.Schema> schemas = new TreeMap<>();
        final Map<Integer, Record.Channel> channels = new TreeMap<>();
        final Map<Integer, long[]> perChannel = new TreeMap<>(); // count, zero log times, first non-zero, last
        final Map<String, ChunkStats> chunks = new TreeMap<>();
        final List<AttachmentInfo> attachments = new ArrayList<>();
        final List<MetadataInfo> metadata = new ArrayList<>();
        long count;
        long zeros;
        long start = -1; // smallest non-zero log time
        long end = -1;

        void message(int channel, long logTime) {
            count++;
            long[] c = perChannel.computeIfAbsent(channel, k -> new long[] {0, 0, -1, -1});
            c[0]++;
            end = end == -1 || Long.compareUnsigned(logTime, end) > 0 ? logTime : end;
            c[3] = c[3] == -1 || Long.compareUnsigned(logTime, c[3]) > 0 ? logTime : c[3];
            if (logTime == 0) {
                zeros++;
                c[1]++;
                return;
            }
            c[2] = c[2] == -1 || Long.compareUnsigned(logTime, c[2]) < 0 ? logTime : c[2];
            start = start == -1 || Long.compareUnsigned(logTime, start) < 0 ? logTime : start;
        }

        void chunk(String compression, long compressed, long uncompressed) {
            chunks.merge(compression, new ChunkStats(1, compressed, uncompressed), (a, b) -> new ChunkStats(
                    a.count() + b.count(), a.compressedBytes() + b.compressedBytes(),
                    a.uncompressedBytes() + b.uncompressedBytes()));
        }

        McapSummary build(Path file, Record.Header h, boolean indexed, List<McapStreamReader.Problem> problems)
                throws IOException {
            // on a relative clock (rosbag2 test bags start at 0) a log time of 0 is a time like any other
            boolean wall = end != -1 && Long.compareUnsigned(end, WALL_CLOCK_NS) >= 0;
            List<ChannelInfo> ch = new ArrayList<>();
            for (Record.Channel c : channels.values()) {
                long[] pc = perChannel.get(c.id());
                long n = pc == null ? 0 : pc[0];
                long timed = pc == null ? 0 : wall ? pc[0] - pc[1] : pc[0];
                long first = pc == null ? 0 : !wall && pc[1] > 0 || pc[2] == -1 ? 0 : pc[2];
                double hz = 0;
                if (pc != null && timed > 1 && pc[3] != first) {
                    hz = (timed - 1) / ((pc[3] - first) / 1e9);
                }
                Record.Schema s = schemas.get(c.schemaId());
                ch.add(new ChannelInfo(c.id(), c.topic(), c.messageEncoding(), c.schemaId(),
                        s == null ? "" : s.name(), n, hz, c.metadata()));
            }
            List<SchemaInfo> sc = new ArrayList<>();
            for (Record.Schema s : schemas.values()) {
                sc.add(new SchemaInfo(s.id(), s.name(), s.encoding(), s.data().remaining()));
            }
            return new McapSummary(file.toString(), Files.size(file), h == null ? "" : h.profile(),
                    h == null ? "" : h.library(), indexed, problems.isEmpty(), count,
                    wall ? Math.max(start, 0) : zeros > 0 ? 0 : Math.max(start, 0), Math.max(end, 0), zeros,
                    Map.copyOf(chunks), List.copyOf(ch), List.copyOf(sc), List.copyOf(attachments),
                    List.copyOf(metadata), List.copyOf(problems));
        }
    }

    private static McapSummary fromIndex(Path file, McapIndexedReader r) throws IOException {
        Acc acc = new Acc();
        acc.schemas.putAll(r.schemas());
        acc.channels.putAll(r.channels());
        for (Record.ChunkIndex ci : r.chunkIndexes()) {
            acc.chunk(ci.compression(), ci.compressedSize(), ci.uncompressedSize());
        }
        // Per-channel rates need each channel's first and last log time, which no index records:
        // one pass over the messages, in file order (no heap), decoding nothing.
        McapIndexedReader.MessageIterator it = r.messages(McapIndexedReader.ReadOptions.builder()
                .order(McapIndexedReader.Order.FILE).build());
        while (it.hasNext()) {
            MessageView m = it.next();
            acc.message(m.channel().id(), m.logTime());
        }
        for (Record.AttachmentIndex ai : r.attachmentIndexes()) {
            acc.attachments.add(new AttachmentInfo(ai.name(), ai.mediaType(), ai.dataSize(), ai.logTime()));
        }
        for (Record.MetadataIndex mi : r.metadataIndexes()) {
            Record.Metadata m = r.readMetadata(mi);
            acc.metadata.add(new MetadataInfo(m.name(), m.metadata()));
        }
        return acc.build(file, r.header(), true, List.of());
    }

    private static McapSummary scan(Path file) throws IOException {
        Acc acc = new Acc();
        Record.Header header = null;
        List<McapStreamReader.Problem> problems;
        McapStreamReader.Options opts = McapStreamReader.Options.builder().lenient(true).build();
        try (McapStreamReader r = McapStreamReader.open(file, opts)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Header h) {
                    header = h;
                } else if (rec instanceof Record.Schema s) {
                    acc.schemas.put(s.id(), s);
                } else if (rec instanceof Record.Channel c) {
                    acc.channels.put(c.id(), c);
                } else if (rec instanceof Record.Message m) {
                    acc.message(m.channelId(), m.logTime());
                } else if (rec instanceof Record.Attachment a) {
                    acc.attachments.add(new AttachmentInfo(a.name(), a.mediaType(), a.data().remaining(), a.logTime()));
                } else if (rec instanceof Record.Metadata m) {
                    acc.metadata.add(new MetadataInfo(m.name(), m.metadata()));
                }
            }
            problems = r.problems();
        }
        return acc.build(file, header, false, problems);
    }
}
