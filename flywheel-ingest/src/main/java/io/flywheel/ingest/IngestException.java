package io.flywheel.ingest;

import java.io.IOException;

/**
 * Input that ingest cannot read: an unknown format, a broken TFRecord, a bad robot profile. The message
 * names the file, where in it (byte offset, or line for YAML) and what was expected.
 */
public class IngestException extends IOException {
    private static final long serialVersionUID = 1L;
    private final String file;
    private final long offset;
    private final String problem;

    /**
     * @param file the file, may be null
     * @param offset byte offset of the problem, -1 when unknown
     * @param problem what was expected and what was found
     */
    public IngestException(String file, long offset, String problem) {
        this(file, offset, problem, null);
    }

    public IngestException(String file, long offset, String problem, Throwable cause) {
        super((file == null ? "<input>" : file) + (offset >= 0 ? " at byte " + offset : "") + ": " + problem, cause);
        this.file = file;
        this.offset = offset;
        this.problem = problem;
    }

    /** @return the file, or null */
    public String file() { return file; }

    /** @return what was expected and what was found: the message without the file and offset */
    public String problem() { return problem; }

    /** @return the byte offset, or -1 */
    public long offset() { return offset; }
}
