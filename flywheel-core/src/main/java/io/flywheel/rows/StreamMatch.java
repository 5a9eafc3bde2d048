package io.flywheel.rows;

import java.util.Objects;

/**
 * The alignment result of one stream for one frame.
 *
 * @param stream stream name (topic or role), not null
 * @param matched whether a message was within tolerance
 * @param residualNs |message time - frame time| in ns; null when unmatched
 */
public record StreamMatch(String stream, boolean matched, Long residualNs) {
    public StreamMatch {
        Objects.requireNonNull(stream, "stream");
    }
}
