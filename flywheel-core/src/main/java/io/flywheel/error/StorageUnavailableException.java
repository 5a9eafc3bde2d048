package io.flywheel.error;

/**
 * The storage could not be read or written: a folder without permission, a full disk, an S3 endpoint that does not
 * answer or refuses the credentials. Nothing committed is lost; the operation may succeed when the storage is back.
 */
public class StorageUnavailableException extends FlywheelException {
    private static final long serialVersionUID = 1L;

    public StorageUnavailableException(String message) {
        super(message);
    }

    public StorageUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
