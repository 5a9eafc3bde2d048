package io.flywheel.serve.export;

/**
 * A LeRobot export refused its input: an output folder that exists, samples without a camera image, image sizes that
 * change within a camera (an unknown tag is a {@link io.flywheel.error.NotFoundException}). The message names the
 * thing and what was expected; nothing is left at the output path. Bad input, as its type says.
 */
public final class ExportException extends io.flywheel.error.BadInputException {
    private static final long serialVersionUID = 1L;

    /** @param message what was wrong and where */
    public ExportException(String message) {
        super(message);
    }

    /** @param message what was wrong and where @param cause the underlying failure */
    public ExportException(String message, Throwable cause) {
        super(message, cause);
    }
}
