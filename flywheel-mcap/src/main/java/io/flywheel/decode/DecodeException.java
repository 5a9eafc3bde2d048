package io.flywheel.decode;

/**
 * A message's bytes do not match its schema, or a schema cannot be parsed. The message names the
 * type, the field path and the byte offset inside the message where decoding stopped.
 */
public class DecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    public DecodeException(String message) {
        super(message);
    }

    public DecodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
