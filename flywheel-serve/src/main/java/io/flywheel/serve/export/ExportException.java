package io.flywheel.serve.export;

/**
 * A LeRobot export refused its input: an unknown tag, an output folder that exists, samples
 * without a camera image, image sizes that change within a camera. The message names the thing
 * and what was expected; nothing is left at the output path.
 */
public final class ExportException extends RuntimeException {
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
