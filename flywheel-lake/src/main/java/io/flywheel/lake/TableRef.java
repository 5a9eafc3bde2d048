package io.flywheel.lake;

/**
 * Which version of a table to read: the latest, a version number (1-based, as Lance numbers
 * them) or a tag. Exactly one of {@code version} and {@code tag} is set, or neither for latest.
 *
 * @param version version number, or null
 * @param tag tag name, or null
 */
public record TableRef(Long version, String tag) {
    public TableRef {
        if (version != null && tag != null) {
            throw new IllegalArgumentException("a table ref is a version or a tag, not both");
        }
        if (version != null && version < 1) {
            throw new IllegalArgumentException("table versions start at 1, got " + version);
        }
        if (tag != null && tag.isBlank()) {
            throw new IllegalArgumentException("tag name must not be blank");
        }
    }

    private static final TableRef LATEST = new TableRef(null, null);

    /** @return the latest version */
    public static TableRef latest() {
        return LATEST;
    }

    /** @param version version number, &ge; 1 @return a ref to that version */
    public static TableRef version(long version) {
        return new TableRef(version, null);
    }

    /** @param tag tag name @return a ref to the tagged version */
    public static TableRef tag(String tag) {
        return new TableRef(null, tag);
    }

    @Override
    public String toString() {
        return version != null ? "version " + version : tag != null ? "tag '" + tag + "'" : "latest";
    }
}
