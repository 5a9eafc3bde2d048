package io.flywheel.lake;

import io.flywheel.error.BadInputException;

/**
 * The lake's own structure is not what this Flywheel reads: an older or newer schema version (the message names the
 * command that migrates it), a damaged commit point or catalog (naming the file).
 */
public final class LakeFormatException extends BadInputException {
    private static final long serialVersionUID = 1L;

    public LakeFormatException(String message) {
        super(message);
    }

    public LakeFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
