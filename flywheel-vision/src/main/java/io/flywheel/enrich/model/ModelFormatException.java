package io.flywheel.enrich.model;

import java.io.IOException;

/**
 * A model source (an npm tarball, a TF.js layers-model file, a weight shard) is not what the
 * converter expects. The message names the file, the position or layer, and what was expected.
 */
public final class ModelFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    public ModelFormatException(String message) {
        super(message);
    }

    public ModelFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
