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

    /** @return what was expected and found, without the file name and offset */
    public String problem() { return problem; }

    /** @return the absolute byte offset of the problem, or -1 */
    public long offset() { return offset; }
}
