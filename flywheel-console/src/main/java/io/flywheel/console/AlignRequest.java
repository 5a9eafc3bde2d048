package io.flywheel.console;

import io.flywheel.align.AlignMethod;
import io.flywheel.align.MissPolicy;

/**
 * A re-alignment asked for by the alignment view.
 *
 * @param stream the stream to pair with the master camera, or null for the first one
 * @param method nearest, asof or interpolate
 * @param toleranceNs tolerance, ns, 0..60 s
 * @param clockOffsetNs the device clock offset, ns (positive: the device stamps ahead), |offset| &le; 60 s
 * @param onMiss flag the frame or drop it
 * @param fromFrame first master frame returned in {@code pairs}, &ge; 0
 * @param frameCount master frames returned, 1..5000
 */
public record AlignRequest(String stream, AlignMethod method, long toleranceNs, long clockOffsetNs, MissPolicy onMiss,
                           long fromFrame, int frameCount) {
    static final long MAX_NS = 60_000_000_000L;

    public AlignRequest {
        if (method == null || onMiss == null) {
            throw ApiException.badRequest("method and on_miss are required");
        }
        if (toleranceNs < 0 || toleranceNs > MAX_NS) {
            throw ApiException.badRequest("tolerance_ms must be in 0..60000, got " + toleranceNs / 1e6);
        }
        if (Math.abs(clockOffsetNs) > MAX_NS) {
            throw ApiException.badRequest("offset_ms must be within +-60000, got " + clockOffsetNs / 1e6);
        }
        if (fromFrame < 0) {
            throw ApiException.badRequest("from must be >= 0, got " + fromFrame);
        }
        if (frameCount < 1 || frameCount > 5000) {
            throw ApiException.badRequest("count must be in 1..5000, got " + frameCount);
        }
    }
}
