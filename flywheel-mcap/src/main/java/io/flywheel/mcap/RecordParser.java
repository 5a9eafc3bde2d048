package io.flywheel.mcap;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the body of one MCAP record (the bytes after the opcode and the uint64 length) into its
 * {@link Record} value, following the field layouts of the MCAP specification, "Records" and
 * "Serialization" (little-endian integers; strings and maps prefixed with a uint32 byte length;
 * byte arrays with a uint32 or uint64 length as the field says). Bytes after the last known field
 * are ignored, as the spec requires, so that newer writers can append fields.
 *
 * <p>Stateless and thread-safe.
 */
public final class RecordParser {
    private RecordParser() {}

    /**
     * @param opcode record opcode
     * @param body the record body; read from its position to its limit; the buffer's position is
     *     left unspecified. Byte fields in the result are read-only views into it (no copy).
     * @param file file name for error messages, may be null
     * @param recordOffset absolute offset of the record's opcode byte, for error messages
     * @return the parsed record; {@link Record.Unknown} for opcodes outside 0x01-0x0F
     * @throws McapFormatException when a field runs past the end of the body, a length is negative
     *     or too large, or a string is not UTF-8
     */
    public static Record parse(int opcode, ByteBuffer body, String file, long recordOffset)
            throws McapFormatException {
        ByteBuffer b = body.slice().order(ByteOrder.LITTLE_ENDIAN);
        try {
            return switch (opcode) {
                case Record.OP_HEADER -> new Record.Header(str(b), str(b));
                case Record.OP_FOOTER -> new Record.Footer(b.getLong(), b.getLong(), u32(b));
                case Record.OP_SCHEMA -> new Record.Schema(u16(b), str(b), str(b), bytes(b, u32(b)));
                case Record.OP_CHANNEL -> new Record.Channel(u16(b), u16(b), str(b), str(b), stringMap(b));
                case Record.OP_MESSAGE -> new Record.Message(u16(b), u32(b), b.getLong(), b.getLong(),
                        bytes(b, b.remaining()));
                case Record.OP_CHUNK -> new Record.Chunk(b.getLong(), b.getLong(), b.getLong(), u32(b),
                        str(b), bytes(b, b.getLong()));
                case Record.OP_MESSAGE_INDEX -> messageIndex(b);
                case Record.OP_CHUNK_INDEX -> new Record.ChunkIndex(b.getLong(), b.getLong(), b.getLong(),
                        b.getLong(), u16LongMap(b), b.getLong(), str(b), b.getLong(), b.getLong());
                case Record.OP_ATTACHMENT -> new Record.Attachment(b.getLong(), b.getLong(), str(b), str(b),
                        bytes(b, b.getLong()), u32(b));
                case Record.OP_ATTACHMENT_INDEX -> new Record.AttachmentIndex(b.getLong(), b.getLong(),
                        b.getLong(), b.getLong(), b.getLong(), str(b), str(b));
                case Record.OP_STATISTICS -> new Record.Statistics(b.getLong(), u16(b), u32(b), u32(b),
                        u32(b), u32(b), b.getLong(), b.getLong(), u16LongMap(b));
                case Record.OP_METADATA -> new Record.Metadata(str(b), stringMap(b));
                case Record.OP_METADATA_INDEX -> new Record.MetadataIndex(b.getLong(), b.getLong(), str(b));
                case Record.OP_SUMMARY_OFFSET -> new Record.SummaryOffset(Byte.toUnsignedInt(b.get()),
                        b.getLong(), b.getLong());
                case Record.OP_DATA_END -> new Record.DataEnd(u32(b));
                default -> new Record.Unknown(opcode, b.asReadOnlyBuffer());
            };
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new McapFormatException(file, recordOffset, String.format(
                    "%s record (opcode 0x%02X) body of %d bytes ends before its fields do%s",
                    name(opcode), opcode, body.remaining(),
                    e.getMessage() == null ? "" : " (" + e.getMessage() + ")"));
        } catch (CharacterCodingException e) {
            throw new McapFormatException(file, recordOffset, String.format(
                    "%s record (opcode 0x%02X) holds a string that is not valid UTF-8", name(opcode), opcode));
        }
    }

    /** @return the spec's name for an opcode, e.g. "Chunk"; "Unknown" outside 0x01-0x0F */
    public static String name(int opcode) {
        return switch (opcode) {
            case Record.OP_HEADER -> "Header";
            case Record.OP_FOOTER -> "Footer";
            case Record.OP_SCHEMA -> "Schema";
            case Record.OP_CHANNEL -> "Channel";
            case Record.OP_MESSAGE -> "Message";
            case Record.OP_CHUNK -> "Chunk";
            case Record.OP_MESSAGE_INDEX -> "MessageIndex";
            case Record.OP_CHUNK_INDEX -> "ChunkIndex";
            case Record.OP_ATTACHMENT -> "Attachment";
            case Record.OP_ATTACHMENT_INDEX -> "AttachmentIndex";
            case Record.OP_STATISTICS -> "Statistics";
            case Record.OP_METADATA -> "Metadata";
            case Record.OP_METADATA_INDEX -> "MetadataIndex";
            case Record.OP_SUMMARY_OFFSET -> "SummaryOffset";
            case Record.OP_DATA_END -> "DataEnd";
            default -> "Unknown";
        };
    }

    private static Record.MessageIndex messageIndex(ByteBuffer b) {
        int channel = u16(b);
        long len = u32(b);
        checkLength(b, len, 16);
        List<Record.MessageIndex.Entry> entries = new ArrayList<>((int) (len / 16));
        for (long i = 0; i < len; i += 16) {
            entries.add(new Record.MessageIndex.Entry(b.getLong(), b.getLong()));
        }
        return new Record.MessageIndex(channel, Collections.unmodifiableList(entries));
    }

    private static int u16(ByteBuffer b) {
        return Short.toUnsignedInt(b.getShort());
    }

    private static long u32(ByteBuffer b) {
        return Integer.toUnsignedLong(b.getInt());
    }

    private static void checkLength(ByteBuffer b, long len, int multiple) {
        if (len < 0 || len > b.remaining()) {
            throw new IllegalArgumentException("a field length of " + Long.toUnsignedString(len)
                    + " bytes exceeds the " + b.remaining() + " bytes left");
        }
        if (len % multiple != 0) {
            throw new IllegalArgumentException("a field length of " + len + " bytes is not a multiple of " + multiple);
        }
    }

    private static ByteBuffer bytes(ByteBuffer b, long len) {
        checkLength(b, len, 1);
        ByteBuffer out = b.slice(b.position(), (int) len).asReadOnlyBuffer();
        b.position(b.position() + (int) len);
        return out;
    }

    private static String str(ByteBuffer b) throws CharacterCodingException {
        long len = u32(b);
        checkLength(b, len, 1);
        int n = (int) len;
        if (n == 0) {
            return "";
        }
        ByteBuffer s = b.slice(b.position(), n);
        b.position(b.position() + n);
        boolean ascii = true;
        for (int i = 0; i < n; i++) {
            if (s.get(i) < 0) {
                ascii = false;
                break;
            }
        }
        if (ascii) {
            byte[] a = new byte[n];
            s.get(0, a);
            return new String(a, StandardCharsets.ISO_8859_1);
        }
        return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(s).toString();
    }

    private static Map<String, String> stringMap(ByteBuffer b) throws CharacterCodingException {
        long len = u32(b);
        checkLength(b, len, 1);
        int end = b.position() + (int) len;
        Map<String, String> m = new LinkedHashMap<>();
        ByteBuffer view = b.slice(b.position(), (int) len).order(ByteOrder.LITTLE_ENDIAN);
        while (view.hasRemaining()) {
            m.put(str(view), str(view));
        }
        b.position(end);
        return Collections.unmodifiableMap(m);
    }

    private static Map<Integer, Long> u16LongMap(ByteBuffer b) {
        long len = u32(b);
        checkLength(b, len, 10);
        Map<Integer, Long> m = new LinkedHashMap<>();
        for (long i = 0; i < len; i += 10) {
            m.put(u16(b), b.getLong());
        }
        return Collections.unmodifiableMap(m);
    }
}
