package io.flywheel.mcap;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Checks an MCAP file against the specification and its own indexes, and says what is wrong and
 * where: magic bytes, record framing, CRCs (data section, summary, chunk, attachment), that every
 * message's channel and every channel's schema is defined, that a schema or channel id is not
 * redefined with different content, that chunk time ranges cover their messages, that message
 * indexes point at the messages they claim, that the summary's chunk, attachment and metadata
 * indexes and statistics agree with the data section, message log-time order, and a truncated
 * tail. Modelled on what the MCAP reference {@code mcap doctor} reports.
 *
 * <p>Errors make a file unfit (a strict reader fails on it, or an index points at the wrong bytes);
 * warnings are readable but surprising: log times going backwards, which slows log-time-ordered
 * reads, or a Statistics record that disagrees with the data (rosbag2 writes such files: it leaves
 * service-event channels out of {@code channel_count}, and counts from its own clock start).
 */
public final class McapDoctor {
    private McapDoctor() {}

    /** How bad a finding is. */
    public enum Severity { ERROR, WARNING }

    /** One problem, at an absolute byte offset of the file (-1 when it concerns the whole file). */
    public record Finding(Severity severity, long offset, String message) {}

    /**
     * What the check found.
     *
     * @param file the file checked
     * @param bytes file size in bytes
     * @param messages messages seen (inside and outside chunks)
     * @param chunks chunk records seen
     * @param hasSummary whether the file has a summary section (records between Data End and Footer)
     * @param crcs CRC fields the file has (chunk, attachment, data section and, with a summary, summary CRCs)
     * @param zeroCrcs of those, the ones that are 0 ("not computed"): their bytes cannot be checked
     * @param zeroLogTimeMessages messages whose log time is 0
     * @param findings errors and warnings, in file order (at most {@value #MAX_FINDINGS} of each kind
     *     are listed individually; {@code suppressed} counts the rest)
     * @param suppressed findings not listed
     */
    public record Report(String file, long bytes, long messages, long chunks, boolean hasSummary, long crcs,
                         long zeroCrcs, long zeroLogTimeMessages, List<Finding> findings, long suppressed) {
        /** @return number of errors listed */
        public long errors() {
            return findings.stream().filter(f -> f.severity() == Severity.ERROR).count();
        }

        /** @return number of warnings listed */
        public long warnings() {
            return findings.stream().filter(f -> f.severity() == Severity.WARNING).count();
        }

        /** @return true when no error was found */
        public boolean ok() {
            return errors() == 0;
        }
    }

    /** Log times at or after this (ns, March 1973) are on a wall clock, where 0 means "unset". */
    static final long WALL_CLOCK_NS = McapSummary.WALL_CLOCK_NS;

    /** Findings listed individually per severity before further ones are only counted. */
    public static final int MAX_FINDINGS = 200;

    private record ChunkSeen(long offset, long length, Record.Chunk chunk, long minLog, long maxLog,
                             Map<Long, long[]> messagesAt, Map<Integer, Long> indexOffsets,
                             long indexEnd) {}

    /**
     * Runs every check.
     *
     * @param file the MCAP file
     * @return the findings; never throws for malformed content, which becomes findings
     * @throws IOException when the file cannot be read at all
     */
    public static Report check(Path file) throws IOException {
        return new Run(file).run();
    }

    private static final class Run {
        private final Path file;
        private final String name;
        private final List<Finding> findings = new ArrayList<>();
        private final int[] listed = new int[2];
        private long suppressed;

        private final Map<Integer, Record.Schema> schemas = new HashMap<>();
        private final Map<Integer, Record.Channel> channels = new HashMap<>();
        private final Map<Integer, Long> channelCounts = new TreeMap<>();
        private final List<ChunkSeen> chunks = new ArrayList<>();
        private final Map<Long, Record.Attachment> attachments = new LinkedHashMap<>();
        private final Map<Long, Record.Metadata> metadata = new LinkedHashMap<>();
        private final List<Record.ChunkIndex> chunkIndexes = new ArrayList<>();
        private final List<Record.AttachmentIndex> attachmentIndexes = new ArrayList<>();
        /** Offsets of attachments the reader found but dropped for a bad CRC (reported once, as that error). */
        private final java.util.Set<Long> badCrcAttachments = new java.util.HashSet<>();
        private final List<Record.MetadataIndex> metadataIndexes = new ArrayList<>();
        private Record.Statistics statistics;
        private long messages;
        private long minLog = Long.MAX_VALUE;
        private long maxLog = Long.MIN_VALUE;
        private long lastLog = Long.MIN_VALUE;
        private long outOfOrder;
        private long firstOutOfOrderOffset = -1;
        private boolean inSummary;
        private long summaryRecords;
        private long crcs;
        private long zeroCrcs;
        private long zeroLogTimes;
        private long firstZeroLogTimeOffset = -1;
        private boolean sawFooter;
        private boolean notMcap;

        Run(Path file) {
            this.file = file;
            this.name = file.toString();
        }

        private void add(Severity s, long offset, String msg) {
            if (listed[s.ordinal()] < MAX_FINDINGS) {
                listed[s.ordinal()]++;
                findings.add(new Finding(s, offset, msg));
            } else {
                suppressed++;
            }
        }

        Report run() throws IOException {
            long size = java.nio.file.Files.size(file);
            McapStreamReader.Options opts = McapStreamReader.Options.builder()
                    .lenient(true).emitChunks(true).validateCrcs(true).build();
            try (McapStreamReader r = McapStreamReader.open(file, opts)) {
                while (true) {
                    Record rec;
                    try {
                        rec = r.next();
                    } catch (McapFormatException e) {
                        add(Severity.ERROR, e.offset(), e.problem());
                        notMcap = e.offset() == 0;
                        break;
                    }
                    if (rec == null) {
                        break;
                    }
                    visit(rec, r.recordOffset(), r.position() - r.recordOffset());
                }
                for (McapStreamReader.Problem p : r.problems()) {
                    if (p.message().startsWith("Attachment \"") && p.message().contains(" declares crc ")) {
                        badCrcAttachments.add(p.offset());
                    }
                    add(Severity.ERROR, p.offset(), p.message());
                }
            }
            if (!sawFooter && !notMcap) {
                add(Severity.ERROR, size, "no Footer record: the file is truncated or was not closed by its writer"
                        + " (readable messages can be salvaged with `flywheel mcap recover`)");
            }
            if (outOfOrder > 0) {
                add(Severity.WARNING, firstOutOfOrderOffset, outOfOrder + " message(s) have a log time earlier than"
                        + " the message before them in file order (first at this offset)");
            }
            if (crcs > 0 && zeroCrcs == crcs) {
                add(Severity.WARNING, -1, "every CRC in the file is 0 (" + crcs + " chunk, attachment, data-section"
                        + " and summary CRCs): its integrity cannot be checked, and corrupted values would pass"
                        + " through readers unnoticed");
            }
            if (zeroLogTimes > 0 && (zeroLogTimes == messages || Long.compareUnsigned(maxLog, WALL_CLOCK_NS) >= 0)) {
                add(Severity.WARNING, firstZeroLogTimeOffset, zeroLogTimes == messages
                        ? "every message has log time 0: the file has no log times (a reader must order and time"
                        + " them by header stamps or file order)"
                        : zeroLogTimes + " message(s) have log time 0 (unset) among log times on a wall clock (first"
                        + " at this offset): log-time reads put them at 1970, before everything else");
            }
            checkSummary();
            findings.sort((a, b) -> Long.compare(a.offset(), b.offset()));
            boolean summary = summaryRecords > 0;
            return new Report(name, size, messages, chunks.size(), summary, crcs, zeroCrcs, zeroLogTimes,
                    List.copyOf(findings), suppressed);
        }

        private void crc(long value) {
            crcs++;
            if (value == 0) {
                zeroCrcs++;
            }
        }

        private void visit(Record rec, long offset, long length) {
            if (inSummary && !(rec instanceof Record.Footer)) {
                summaryRecords++;
            }
            if (rec instanceof Record.Chunk c) {
                crc(c.uncompressedCrc());
            } else if (rec instanceof Record.Attachment a) {
                crc(a.crc());
            } else if (rec instanceof Record.DataEnd d) {
                crc(d.dataSectionCrc());
            } else if (rec instanceof Record.Footer f && f.summaryStart() != 0) {
                crc(f.summaryCrc());
            }
            if (rec instanceof Record.Schema s) {
                defineSchema(s, offset);
            } else if (rec instanceof Record.Channel c) {
                defineChannel(c, offset);
            } else if (rec instanceof Record.Message m) {
                message(m, offset);
            } else if (rec instanceof Record.Chunk c) {
                chunk(c, offset, length);
            } else if (rec instanceof Record.MessageIndex mi) {
                messageIndex(mi, offset, length);
            } else if (rec instanceof Record.Attachment a) {
                attachments.put(offset, a);
            } else if (rec instanceof Record.Metadata m) {
                metadata.put(offset, m);
            } else if (rec instanceof Record.DataEnd) {
                inSummary = true;
            } else if (rec instanceof Record.ChunkIndex ci) {
                chunkIndexes.add(ci);
            } else if (rec instanceof Record.AttachmentIndex ai) {
                attachmentIndexes.add(ai);
            } else if (rec instanceof Record.MetadataIndex mi) {
                metadataIndexes.add(mi);
            } else if (rec instanceof Record.Statistics st) {
                statistics = st;
            } else if (rec instanceof Record.Footer) {
                sawFooter = true;
            }
        }

        private void defineSchema(Record.Schema s, long offset) {
            if (s.id() == 0) {
                add(Severity.ERROR, offset, "Schema record uses id 0, which the spec reserves for 'no schema'");
                return;
            }
            Record.Schema prev = schemas.putIfAbsent(s.id(), s);
            if (prev != null && !(prev.name().equals(s.name()) && prev.encoding().equals(s.encoding())
                    && prev.data().equals(s.data()))) {
                add(Severity.ERROR, offset, "schema id " + s.id() + " is redefined with different content ("
                        + prev.name() + " -> " + s.name() + ")");
            }
        }

        private void defineChannel(Record.Channel c, long offset) {
            if (c.schemaId() != 0 && !schemas.containsKey(c.schemaId())) {
                add(Severity.ERROR, offset, "channel " + c.id() + " (" + c.topic() + ") refers to schema id "
                        + c.schemaId() + ", which no earlier Schema record defines");
            }
            Record.Channel prev = channels.putIfAbsent(c.id(), c);
            if (prev != null && !(prev.topic().equals(c.topic()) && prev.schemaId() == c.schemaId()
                    && prev.messageEncoding().equals(c.messageEncoding()) && prev.metadata().equals(c.metadata()))) {
                add(Severity.ERROR, offset, "channel id " + c.id() + " is redefined with different content ("
                        + prev.topic() + " -> " + c.topic() + ")");
            }
        }

        private void message(Record.Message m, long reportAt) {
            messages++;
            if (!channels.containsKey(m.channelId())) {
                add(Severity.ERROR, reportAt, "message on channel id " + m.channelId()
                        + ", which no earlier Channel record defines");
            }
            channelCounts.merge(m.channelId(), 1L, Long::sum);
            long t = m.logTime();
            if (Long.compareUnsigned(t, lastLog) < 0 && lastLog != Long.MIN_VALUE) {
                if (outOfOrder++ == 0) {
                    firstOutOfOrderOffset = reportAt;
                }
            }
            lastLog = t;
            if (t == 0 && zeroLogTimes++ == 0) {
                firstZeroLogTimeOffset = reportAt;
            }
            if (Long.compareUnsigned(t, minLog) < 0 || minLog == Long.MAX_VALUE) {
                minLog = t;
            }
            if (maxLog == Long.MIN_VALUE || Long.compareUnsigned(t, maxLog) > 0) {
                maxLog = t;
            }
        }

        private void chunk(Record.Chunk c, long offset, long length) {
            Map<Long, long[]> at = new HashMap<>();
            long cMin = -1;
            long cMax = -1;
            try {
                ByteBuffer records = ChunkDecompressor.decompress(c, name, offset, true);
                ByteBuffer b = records.duplicate().order(ByteOrder.LITTLE_ENDIAN);
                while (b.remaining() > 0) {
                    int inner = b.position();
                    if (b.remaining() < 9) {
                        add(Severity.ERROR, offset, "chunk at byte " + offset + " ends inside a record header at"
                                + " uncompressed offset " + inner);
                        break;
                    }
                    int op = Byte.toUnsignedInt(b.get());
                    long len = b.getLong();
                    if (len < 0 || len > b.remaining()) {
                        add(Severity.ERROR, offset, "record at uncompressed offset " + inner + " of the chunk at byte "
                                + offset + " declares length " + Long.toUnsignedString(len) + " but only "
                                + b.remaining() + " bytes are left in the chunk");
                        break;
                    }
                    ByteBuffer body = b.slice(b.position(), (int) len);
                    b.position(b.position() + (int) len);
                    Record inRec = RecordParser.parse(op, body, name, offset);
                    if (inRec instanceof Record.Schema s) {
                        defineSchema(s, offset);
                    } else if (inRec instanceof Record.Channel ch) {
                        defineChannel(ch, offset);
                    } else if (inRec instanceof Record.Message m) {
                        message(m, offset);
                        at.put((long) inner, new long[] {m.channelId(), m.logTime()});
                        if (cMin == -1 || Long.compareUnsigned(m.logTime(), cMin) < 0) {
                            cMin = m.logTime();
                        }
                        if (cMax == -1 || Long.compareUnsigned(m.logTime(), cMax) > 0) {
                            cMax = m.logTime();
                        }
                    } else if (!(inRec instanceof Record.Unknown)) {
                        add(Severity.ERROR, offset, "chunk at byte " + offset + " holds a "
                                + RecordParser.name(op) + " record, which the spec does not allow inside a chunk");
                    }
                }
            } catch (McapFormatException e) {
                add(Severity.ERROR, e.offset(), e.problem());
            }
            if (!at.isEmpty() && (Long.compareUnsigned(cMin, c.messageStartTime()) < 0
                    || Long.compareUnsigned(cMax, c.messageEndTime()) > 0)) {
                add(Severity.ERROR, offset, "chunk at byte " + offset + " declares message times ["
                        + Long.toUnsignedString(c.messageStartTime()) + ", " + Long.toUnsignedString(c.messageEndTime())
                        + "] but holds messages in [" + Long.toUnsignedString(cMin) + ", " + Long.toUnsignedString(cMax) + "]");
            }
            chunks.add(new ChunkSeen(offset, length, c, cMin, cMax, at, new LinkedHashMap<>(), offset + length));
        }

        private void messageIndex(Record.MessageIndex mi, long offset, long length) {
            if (chunks.isEmpty()) {
                add(Severity.ERROR, offset, "MessageIndex record before any chunk");
                return;
            }
            ChunkSeen last = chunks.get(chunks.size() - 1);
            if (last.indexEnd() != offset) {
                add(Severity.WARNING, offset, "MessageIndex record does not directly follow its chunk's records");
            }
            last.indexOffsets().put(mi.channelId(), offset);
            chunks.set(chunks.size() - 1, new ChunkSeen(last.offset(), last.length(), last.chunk(), last.minLog(),
                    last.maxLog(), last.messagesAt(), last.indexOffsets(), offset + length));
            long inChunk = last.messagesAt().values().stream().filter(v -> v[0] == mi.channelId()).count();
            if (inChunk != mi.records().size()) {
                add(Severity.ERROR, offset, "message index for channel " + mi.channelId() + " lists "
                        + mi.records().size() + " messages but the chunk at byte " + last.offset() + " holds " + inChunk);
            }
            for (Record.MessageIndex.Entry e : mi.records()) {
                long[] m = last.messagesAt().get(e.offset());
                if (m == null || m[0] != mi.channelId() || m[1] != e.logTime()) {
                    add(Severity.ERROR, offset, "message index for channel " + mi.channelId() + " points at uncompressed"
                            + " offset " + e.offset() + " (log time " + Long.toUnsignedString(e.logTime())
                            + ") of the chunk at byte " + last.offset() + ", where no such message starts");
                    break;
                }
            }
        }

        private void checkSummary() {
            Map<Long, ChunkSeen> byOffset = new HashMap<>();
            for (ChunkSeen c : chunks) {
                byOffset.put(c.offset(), c);
            }
            if (inSummary && !chunks.isEmpty() && chunkIndexes.isEmpty()) {
                add(Severity.WARNING, -1, "the file has chunks but no chunk indexes: readers must scan it"
                        + " front to back");
            }
            if (!chunkIndexes.isEmpty() && chunkIndexes.size() != chunks.size()) {
                add(Severity.ERROR, -1, "summary has " + chunkIndexes.size() + " chunk indexes but the data section has "
                        + chunks.size() + " chunks");
            }
            for (Record.ChunkIndex ci : chunkIndexes) {
                ChunkSeen c = byOffset.get(ci.chunkStartOffset());
                if (c == null) {
                    add(Severity.ERROR, ci.chunkStartOffset(), "chunk index points at byte "
                            + Long.toUnsignedString(ci.chunkStartOffset()) + ", where no chunk starts");
                    continue;
                }
                List<String> diffs = new ArrayList<>();
                if (ci.chunkLength() != c.length()) {
                    diffs.add("chunk_length " + ci.chunkLength() + " vs " + c.length());
                }
                if (ci.messageStartTime() != c.chunk().messageStartTime()
                        || ci.messageEndTime() != c.chunk().messageEndTime()) {
                    diffs.add("message time range");
                }
                if (!ci.compression().equals(c.chunk().compression())) {
                    diffs.add("compression '" + ci.compression() + "' vs '" + c.chunk().compression() + "'");
                }
                if (ci.compressedSize() != c.chunk().records().remaining()) {
                    diffs.add("compressed_size " + ci.compressedSize() + " vs " + c.chunk().records().remaining());
                }
                if (ci.uncompressedSize() != c.chunk().uncompressedSize()) {
                    diffs.add("uncompressed_size");
                }
                if (!ci.messageIndexOffsets().isEmpty() && !ci.messageIndexOffsets().equals(c.indexOffsets())) {
                    diffs.add("message_index_offsets " + ci.messageIndexOffsets() + " vs " + c.indexOffsets());
                }
                if (!diffs.isEmpty()) {
                    add(Severity.ERROR, c.offset(), "chunk index disagrees with the chunk at byte " + c.offset() + ": "
                            + String.join(", ", diffs));
                }
            }
            for (Record.AttachmentIndex ai : attachmentIndexes) {
                Record.Attachment a = attachments.get(ai.offset());
                if (a == null && badCrcAttachments.contains(ai.offset())) {
                    continue; // it starts there; its CRC error says what is wrong
                }
                if (a == null || !a.name().equals(ai.name()) || a.data().remaining() != ai.dataSize()) {
                    add(Severity.ERROR, ai.offset(), "attachment index '" + ai.name() + "' points at byte " + ai.offset()
                            + ", where no matching attachment starts");
                }
            }
            for (Record.MetadataIndex mi : metadataIndexes) {
                Record.Metadata m = metadata.get(mi.offset());
                if (m == null || !m.name().equals(mi.name())) {
                    add(Severity.ERROR, mi.offset(), "metadata index '" + mi.name() + "' points at byte " + mi.offset()
                            + ", where no matching metadata record starts");
                }
            }
            if (statistics != null) {
                Record.Statistics s = statistics;
                List<String> diffs = new ArrayList<>();
                cmp(diffs, "message_count", s.messageCount(), messages);
                cmp(diffs, "chunk_count", s.chunkCount(), chunks.size());
                cmp(diffs, "attachment_count", s.attachmentCount(), attachments.size() + badCrcAttachments.size());
                cmp(diffs, "metadata_count", s.metadataCount(), metadata.size());
                cmp(diffs, "channel_count", s.channelCount(), channels.size());
                cmp(diffs, "schema_count", s.schemaCount(), schemas.size());
                if (messages > 0) {
                    cmp(diffs, "message_start_time", s.messageStartTime(), minLog);
                    cmp(diffs, "message_end_time", s.messageEndTime(), maxLog);
                }
                if (!s.channelMessageCounts().isEmpty()) {
                    Map<Integer, Long> declared = new TreeMap<>(s.channelMessageCounts());
                    declared.values().removeIf(v -> v == 0);
                    if (!Objects.equals(declared, channelCounts)) {
                        diffs.add("channel_message_counts " + declared + " vs " + channelCounts);
                    }
                }
                if (!diffs.isEmpty()) {
                    add(Severity.WARNING, -1, "statistics disagree with the data section (readers that trust them"
                            + " will show wrong counts or times): " + String.join(", ", diffs));
                }
            }
        }

        private static void cmp(List<String> diffs, String field, long declared, long actual) {
            if (declared != actual) {
                diffs.add(field + " " + Long.toUnsignedString(declared) + " vs " + Long.toUnsignedString(actual));
            }
        }
    }
}
