package io.flywheel.error;

/**
 * The root of Flywheel's typed errors. Each subclass says what kind of failure it is, so that a caller reacts by
 * type (retry a {@link ConflictException}, report a {@link BadInputException}) and the command line maps the type
 * to its exit code: every kind here exits 1 (bad input or a failed check); only wrong usage of a command exits 2, and
 * that is not a {@code FlywheelException}.
 *
 * <p>Messages are written for people: they name the file, table, version or position concerned and what was
 * expected there.
 */
public abstract class FlywheelException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    protected FlywheelException(String message) {
        super(message);
    }

    protected FlywheelException(String message, Throwable cause) {
        super(message, cause);
    }
}
