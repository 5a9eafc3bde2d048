package io.flywheel.console;

/**
 * A request the console refuses: an HTTP status (4xx) and a one-line message saying what was wrong,
 * sent to the client as {@code {"error": message, "status": status}}.
 */
public final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int status;

    /**
     * @param status HTTP status, 400..499
     * @param message what was wrong, naming the parameter and what was expected
     */
    public ApiException(int status, String message) {
        super(message);
        if (status < 400 || status > 499) {
            throw new IllegalArgumentException("ApiException status must be 4xx, got " + status);
        }
        this.status = status;
    }

    /** @return the HTTP status */
    public int status() {
        return status;
    }

    static ApiException badRequest(String message) {
        return new ApiException(400, message);
    }

    static ApiException notFound(String message) {
        return new ApiException(404, message);
    }
}
