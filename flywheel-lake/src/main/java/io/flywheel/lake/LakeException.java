package io.flywheel.lake;

/** A lake operation failed; the message names the lake or table location and what was expected. */
public class LakeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LakeException(String message) {
        super(message);
    }

    public LakeException(String message, Throwable cause) {
        super(message, cause);
    }
}
