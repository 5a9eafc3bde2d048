package io.flywheel.error;

/**
 * Something named does not exist: a lake, table, version, tag, training set, episode id or topic. The message names
 * what was asked for and, where it helps, what exists.
 */
public class NotFoundException extends FlywheelException {
    private static final long serialVersionUID = 1L;

    public NotFoundException(String message) {
        super(message);
    }

    public NotFoundException(String message, Throwable cause) {
        super(message, cause);
    }
}
