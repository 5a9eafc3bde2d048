package io.flywheel.mcap;

import java.io.IOException;

/**
 * The bytes of an MCAP file do not follow the specification: bad magic, a record running past the
 * end, a CRC mismatch, an unknown compression. The message names the file, the absolute byte
 * offset and what was expected there.
 */
public class McapFormatException extends IOException {
    private static final long serialVersionUID = 1L;
    private final String file;
    private final long offset;
    private final String problem;

    /**
     * @param file the file (or stream) name, may be null for in-memory input
     * @param offset absolute byte offset in the file where the problem is, -1 if unknown
     * @param problem what was expected and what was found
     */
    public McapFormatException(String file, long offset, String problem) {
        this(file, offset, problem, null);
    }

    public McapFormatException(String file, long offset, String problem, Throwable cause) {
        super((file == null ? "<input>" : file) + (offset >= 0 ? " at byte " + offset : "") + ": " + problem, cause);
        this.file = file;
        this.offset = offset;
        this.problem = problem;
    }

    /** @return the file name, or null */
    public String file() { return file; }

    /**
     * The error for a file whose first bytes are not the MCAP magic, naming a few formats that are
     * often mistaken for MCAP.
     *
     * @param file file name
     * @param head the first bytes of the file (up to 8)
     * @return the exception to throw
     */
    public static McapFormatException badMagic(String file, byte[] head) {
        StringBuilder hex = new StringBuilder();
        for (byte b : head) {
            hex.append(hex.length() == 0 ? "" : " ").append(String.format("%02X", b & 0xFF));
        }
        String found = head.length == 0 ? "an empty input" : "bytes " + hex;
        String text = new String(head, java.nio.charset.StandardCharsets.ISO_8859_1);
        String hint = text.startsWith("#ROSBAG") ? " (this is a ROS 1 bag: `flywheel ingest` reads it)"
                : head.length >= 2 && (head[0] & 0xFF) == 0xFF && (head[1] & 0xFF) == 0xD8 ? " (this is a JPEG image)"
                : text.startsWith("SQLite") ? " (this is a SQLite file: rosbag2's sqlite3 storage, which `flywheel ingest`, `mcap info`, `mcap cat` and `mcap doctor` read)" : "";
        return new McapFormatException(file, 0, "expected the MCAP magic 89 4D 43 41 50 30 0D 0A, found " + found + hint);
    }

    /** @return what was expected and found, without the file name and offset */
    public String problem() { return problem; }

    /** @return the absolute byte offset of the problem, or -1 */
    public long offset() { return offset; }
}
