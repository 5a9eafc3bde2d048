package io.flywheel.fleet.client;

import io.flywheel.error.FlywheelException;
import io.grpc.Status;

/**
 * The gateway refused an upload, or it could not be reached within the retries: the gRPC status code and the
 * gateway's message ({@code "RESOURCE_EXHAUSTED: robot r1 has ... past its quota"}).
 */
public final class UploadFailedException extends FlywheelException {
    private static final long serialVersionUID = 1L;
    private final transient Status.Code code;
    private final int attempts;
    private final boolean refused;

    /**
     * @param code the gRPC status code
     * @param message what happened, starting with the file
     * @param cause the gRPC error
     * @param attempts streams opened before giving up
     * @param refused true when the gateway refused the upload (a status not worth retrying: the same upload would be
     *     refused again); false when the retries ran out on a status worth retrying (the gateway unreachable, stopping
     *     or busy: the same upload may work later)
     */
    public UploadFailedException(Status.Code code, String message, Throwable cause, int attempts, boolean refused) {
        super(message, cause);
        this.code = code;
        this.attempts = attempts;
        this.refused = refused;
    }

    /** @return streams opened before giving up */
    public int attempts() {
        return attempts;
    }

    /** @return true when the gateway refused it; false when the retries ran out (try again later) */
    public boolean refused() {
        return refused;
    }

    /** @return the gRPC status code, e.g. {@code DATA_LOSS} */
    public Status.Code code() {
        return code;
    }
}
