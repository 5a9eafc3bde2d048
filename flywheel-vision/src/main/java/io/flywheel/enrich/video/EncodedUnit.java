package io.flywheel.enrich.video;

import java.util.Objects;

/**
 * One encoded frame from {@link AnnexBEncoder}.
 *
 * @param frameIndex 0-based index of the frame in the stream (presentation order = decode order:
 *                   the encoders are run without B frames)
 * @param keyframe   true for an IDR access unit, which also carries the SPS and PPS
 * @param data       the access unit in Annex B format (ITU-T H.264 Annex B), ready to be the
 *                   {@code data} of one foxglove.CompressedVideo message
 */
public record EncodedUnit(long frameIndex, boolean keyframe, byte[] data) {
    /** @throws NullPointerException when data is null */
    public EncodedUnit {
        Objects.requireNonNull(data, "data");
    }
}
