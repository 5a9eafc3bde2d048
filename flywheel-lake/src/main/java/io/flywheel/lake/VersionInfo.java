package io.flywheel.lake;

import java.time.Instant;
import java.util.Map;

/**
 * One committed version of a table.
 *
 * @param version version number (1 = the empty table made by init)
 * @param committedAt commit time
 * @param metadata Lance's version metadata (may be empty)
 */
public record VersionInfo(long version, Instant committedAt, Map<String, String> metadata) {
    public VersionInfo {
        metadata = Map.copyOf(metadata);
    }
}
