package io.flywheel.mcap;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Salvages a damaged MCAP file (truncated, no summary, corrupt chunks) into a valid, indexed one:
 * every message, schema, channel, attachment and metadata record that can be read front to back is
 * written again through {@link McapWriter}, with chunk and message indexes, statistics and a
 * summary. Chunks that fail their CRC or do not decompress are skipped whole (their messages cannot
 * be trusted); reading stops where the input breaks off.
 */
public final class McapRecover {
    private McapRecover() {}

    /**
     * What was salvaged.
     *
     * @param messages messages written
     * @param schemas schemas written
     * @param channels channels written
     * @param attachments attachments written
     * @param metadata metadata records written
     * @param readUpTo absolute offset in the input up to which records were read whole
     * @param inputBytes size of the input
     * @param problems what was wrong in the input, with offsets
     */
    public record Result(long messages, long schemas, long channels, long attachments, long metadata,
                         long readUpTo, long inputBytes, List<McapStreamReader.Problem> problems) {}

    /**
     * @param in the damaged file
     * @param out where to write the recovered file (replaced atomically when complete)
     * @param writer writer options (compression, chunk size); the profile and library come from the
     *     input's Header when it has one
     * @return what was salvaged
     * @throws McapFormatException when the input is not an MCAP file at all (bad magic)
     * @throws IOException when reading or writing fails
     */
    public static Result recover(Path in, Path out, McapWriter.Builder writer) throws IOException {
        return recover(in, out, writer, true);
    }

    /**
     * As {@link #recover(Path, Path, McapWriter.Builder)}; with {@code validateCrcs} false, chunks whose
     * CRC does not match are kept too (their bytes may be damaged: the caller says so to the user).
     */
    public static Result recover(Path in, Path out, McapWriter.Builder writer, boolean validateCrcs) throws IOException {
        if (Files.exists(out) && Files.isSameFile(in, out)) {
            throw new IOException("recover writes a new file: the output " + out + " must not be the input");
        }
        if (Files.isSymbolicLink(out) && Files.exists(out)) {
            out = out.toRealPath(); // write through the link, not over it
        }
        if (Files.exists(out) && !Files.isRegularFile(out)) {
            throw new IOException(out + ": the output must be a file path, and this is "
                    + (Files.isDirectory(out) ? "a folder" : "not a regular file"));
        }
        Path parent = out.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new IOException(out + ": the folder " + parent + " does not exist");
        }
        McapStreamReader.Options opts = McapStreamReader.Options.builder().lenient(true).validateCrcs(validateCrcs).build();
        Map<Integer, Record.Schema> schemas = new HashMap<>();
        Map<Integer, Integer> schemaIds = new HashMap<>();
        Map<Integer, Record.Channel> channels = new HashMap<>();
        Map<Integer, Integer> channelIds = new HashMap<>();
        long messages = 0;
        long attachments = 0;
        long metadata = 0;
        McapWriter w = null;
        try (McapStreamReader r = McapStreamReader.open(in, opts)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (w == null) {
                    if (rec instanceof Record.Header h) {
                        writer.profile(h.profile()).library(h.library().isEmpty() ? "flywheel mcap recover"
                                : h.library());
                        continue;
                    }
                    w = writer.build(out);
                }
                if (rec instanceof Record.Schema s) {
                    schemas.putIfAbsent(s.id(), s);
                } else if (rec instanceof Record.Channel c) {
                    channels.putIfAbsent(c.id(), c);
                } else if (rec instanceof Record.Message m) {
                    Integer ch = channelIds.get(m.channelId());
                    if (ch == null) {
                        Record.Channel c = channels.get(m.channelId());
                        if (c == null) {
                            continue; // a message whose channel was lost cannot be interpreted
                        }
                        int schemaId = 0;
                        if (c.schemaId() != 0) {
                            Record.Schema s = schemas.get(c.schemaId());
                            if (s == null) {
                                continue;
                            }
                            Integer sid = schemaIds.get(s.id());
                            if (sid == null) {
                                sid = w.registerSchema(s.name(), s.encoding(), bytes(s.data()));
                                schemaIds.put(s.id(), sid);
                            }
                            schemaId = sid;
                        }
                        ch = w.registerChannel(c.topic(), c.messageEncoding(), schemaId, c.metadata());
                        channelIds.put(c.id(), ch);
                    }
                    w.writeMessage(ch, m.sequence(), m.logTime(), m.publishTime(), m.data());
                    messages++;
                } else if (rec instanceof Record.Attachment a) {
                    w.writeAttachment(a.name(), a.mediaType(), a.logTime(), a.createTime(), a.data());
                    attachments++;
                } else if (rec instanceof Record.Metadata md) {
                    w.writeMetadata(md.name(), md.metadata());
                    metadata++;
                }
            }
            if (w == null) {
                w = writer.build(out);
            }
            w.close();
            return new Result(messages, schemaIds.size(), channelIds.size(), attachments, metadata,
                    r.lastGoodOffset(), Files.size(in), new ArrayList<>(r.problems()));
        } catch (IOException | RuntimeException e) {
            if (w != null) {
                w.abort();
            }
            throw e;
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] a = new byte[d.remaining()];
        d.get(a);
        return a;
    }
}
