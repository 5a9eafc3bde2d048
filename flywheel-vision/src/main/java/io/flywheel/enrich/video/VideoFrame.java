package io.flywheel.enrich.video;

import java.util.Objects;

import io.flywheel.enrich.RgbImage;

/**
 * One decoded video frame.
 *
 * @param index       0-based position of the frame in presentation order among the frames this
 *                    decoder returned
 * @param timestampNs the frame's time in int64 nanoseconds: for frames from MP4, the presentation
 *                    time (ISO/IEC 14496-12 composition time after the edit list) relative to the
 *                    start of the file; for frames from CompressedVideo messages, the log time of
 *                    the message that carried the frame
 * @param seconds     the same time in seconds, computed from the exact rational timestamp (MP4:
 *                    pts &middot; time base), not from {@code timestampNs}
 * @param keyframe    true when the frame is an intra (IDR / IRAP) picture
 * @param image       the picture converted to 8-bit RGB
 */
public record VideoFrame(long index, long timestampNs, double seconds, boolean keyframe, RgbImage image) {
    /** @throws NullPointerException when the image is null */
    public VideoFrame {
        Objects.requireNonNull(image, "image");
    }
}
