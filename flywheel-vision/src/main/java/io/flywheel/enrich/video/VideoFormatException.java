package io.flywheel.enrich.video;

import java.io.IOException;

/**
 * Video bytes that cannot be decoded: not an Annex B byte stream, a truncated or corrupt access
 * unit, an MP4 without a video track, a CompressedVideo message without its fields. The message
 * names the source (file, topic), the position (message index and log time, or packet index and
 * byte offset) and what was expected; FFmpeg's own error text is appended where it gave one.
 */
public class VideoFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param message source, position and problem */
    public VideoFormatException(String message) {
        super(message);
    }

    /**
     * @param message source, position and problem
     * @param cause the underlying error
     */
    public VideoFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
