package io.flywheel.error;

/**
 * The input is not what was expected: a damaged or truncated file, a wrong schema, a value out of range, a lake
 * written by another schema version, a damaged commit point. The message names the file (or table and version) and
 * the position.
 */
public class BadInputException extends FlywheelException {
    private static final long serialVersionUID = 1L;

    public BadInputException(String message) {
        super(message);
    }

    public BadInputException(String message, Throwable cause) {
        super(message, cause);
    }
}
