package io.flywheel.error;

/**
 * A change could not be committed because a concurrent change that does not commute with it was committed first
 * (the same rows and columns, a replaced table, an existing tag). Nothing of the failed change is visible; re-run it
 * to apply it on top of the other.
 */
public class ConflictException extends FlywheelException {
    private static final long serialVersionUID = 1L;

    public ConflictException(String message) {
        super(message);
    }

    public ConflictException(String message, Throwable cause) {
        super(message, cause);
    }
}
