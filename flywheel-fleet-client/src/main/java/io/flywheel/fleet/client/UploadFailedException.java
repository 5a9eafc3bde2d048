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

    /**
     * @param code the gRPC status code
     * @param message what happened, starting with the file
     * @param cause the gRPC error
     */
    public UploadFailedException(Status.Code code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** @return the gRPC status code, e.g. {@code DATA_LOSS} */
    public Status.Code code() {
        return code;
    }
}
