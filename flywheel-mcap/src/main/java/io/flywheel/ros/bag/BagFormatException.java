package io.flywheel.ros.bag;

import java.io.IOException;

/**
 * The bytes of a ROS 1 bag do not follow the bag format 2.0 (http://wiki.ros.org/Bags/Format/2.0):
 * bad magic line, a record or header field running past its end (a truncated file), a missing
 * header field, an unknown chunk compression, an index that points at the wrong record. The
 * message names the file, the absolute byte offset of the record at fault and what was expected.
 */
public class BagFormatException extends IOException {
    private static final long serialVersionUID = 1L;
    private final String file;
    private final long offset;

    /**
     * @param file the file (or stream) name, may be null for in-memory input
     * @param offset absolute byte offset in the file of the record at fault, -1 if unknown
     * @param problem what was expected and what was found
     */
    public BagFormatException(String file, long offset, String problem) {
        this(file, offset, problem, null);
    }

    public BagFormatException(String file, long offset, String problem, Throwable cause) {
        super((file == null ? "<input>" : file) + (offset >= 0 ? " at byte " + offset : "") + ": " + problem, cause);
        this.file = file;
        this.offset = offset;
    }

    /** @return the file name, or null */
    public String file() { return file; }

    /** @return the absolute byte offset of the record at fault, or -1 */
    public long offset() { return offset; }
}
