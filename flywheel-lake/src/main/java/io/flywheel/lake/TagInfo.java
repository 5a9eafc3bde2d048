package io.flywheel.lake;

/**
 * A named, immutable pointer to a table version.
 *
 * @param name tag name
 * @param version the version it points to
 */
public record TagInfo(String name, long version) {}
