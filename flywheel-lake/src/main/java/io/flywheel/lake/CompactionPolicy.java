package io.flywheel.lake;

import java.util.Locale;
import java.util.Map;

import org.lance.compaction.CompactionOptions;

import io.flywheel.error.BadInputException;

/**
 * When and how a table is compacted (Lance compaction: many small fragments, and fragments with many deleted rows,
 * rewritten into fragments of about {@code targetRowsPerFragment} rows).
 *
 * <p>A table is compacted when it has more than {@code minSmallFragments} small fragments (fewer live rows than
 * {@code targetRowsPerFragment}), or when more than {@code maxDeletedFraction} of its physical rows are deleted; Lance's
 * planner then picks the fragments to rewrite (runs of adjacent small fragments, and fragments whose deleted share is
 * above the same fraction). Rows and values are kept; row positions (offsets) change, as after any rewrite.
 *
 * @param targetRowsPerFragment rows per rewritten fragment, &ge; 1 (default 1,048,576, Lance's default)
 * @param minSmallFragments compact when the table has more small fragments than this, &ge; 0 (default 8)
 * @param maxDeletedFraction compact when the deleted share of the physical rows is above this, in [0, 1] (default 0.1,
 *     Lance's default threshold for materialising deletions)
 */
public record CompactionPolicy(long targetRowsPerFragment, int minSmallFragments, double maxDeletedFraction) {
    /** Lake property: {@link #targetRowsPerFragment} of the routine (optional). */
    public static final String TARGET_ROWS_PROPERTY = "flywheel.maintenance.target_rows_per_fragment";
    /** Lake property: {@link #minSmallFragments} of the routine (optional). */
    public static final String MIN_SMALL_FRAGMENTS_PROPERTY = "flywheel.maintenance.min_small_fragments";
    /** Lake property: {@link #maxDeletedFraction} of the routine (optional). */
    public static final String MAX_DELETED_FRACTION_PROPERTY = "flywheel.maintenance.max_deleted_fraction";

    private static final CompactionPolicy DEFAULTS = new CompactionPolicy(1L << 20, 8, 0.1);

    public CompactionPolicy {
        if (targetRowsPerFragment < 1) {
            throw new IllegalArgumentException("target rows per fragment must be >= 1, got " + targetRowsPerFragment);
        }
        if (minSmallFragments < 0) {
            throw new IllegalArgumentException("the small-fragment count must be >= 0, got " + minSmallFragments);
        }
        if (!(maxDeletedFraction >= 0 && maxDeletedFraction <= 1)) {
            throw new IllegalArgumentException("the deleted-row fraction must be in [0, 1], got " + maxDeletedFraction);
        }
    }

    /** @return 1,048,576 rows per fragment, more than 8 small fragments, or more than 10% deleted rows */
    public static CompactionPolicy defaults() {
        return DEFAULTS;
    }

    /** @return a builder starting from {@link #defaults()} */
    public static Builder builder() {
        return new Builder(DEFAULTS);
    }

    /**
     * The routine's policy: the defaults, with any of {@link #TARGET_ROWS_PROPERTY}, {@link #MIN_SMALL_FRAGMENTS_PROPERTY}
     * and {@link #MAX_DELETED_FRACTION_PROPERTY} the lake properties set.
     *
     * @throws BadInputException naming the property when its value is not a number in range
     */
    public static CompactionPolicy fromProperties(Map<String, String> properties) {
        Builder b = builder();
        try {
            String v = properties.get(TARGET_ROWS_PROPERTY);
            if (v != null) {
                b.targetRowsPerFragment(Long.parseLong(v.strip()));
            }
            v = properties.get(MIN_SMALL_FRAGMENTS_PROPERTY);
            if (v != null) {
                b.minSmallFragments(Integer.parseInt(v.strip()));
            }
            v = properties.get(MAX_DELETED_FRACTION_PROPERTY);
            if (v != null) {
                b.maxDeletedFraction(Double.parseDouble(v.strip()));
            }
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new BadInputException("lake properties " + TARGET_ROWS_PROPERTY + ", " + MIN_SMALL_FRAGMENTS_PROPERTY
                    + ", " + MAX_DELETED_FRACTION_PROPERTY + " do not make a compaction policy: " + e.getMessage(), e);
        }
    }

    /**
     * @param layout a table's fragments
     * @return why the table should be compacted under this policy (one line), or null when it need not be
     */
    public String reason(TableLayout layout) {
        if (layout.smallFragments() > minSmallFragments && layout.fragments() > 1) {
            return layout.smallFragments() + " small fragments (< " + targetRowsPerFragment + " rows), more than "
                    + minSmallFragments;
        }
        if (layout.physicalRows() > 0 && layout.deletedFraction() > maxDeletedFraction) {
            return String.format(Locale.ROOT, "%d of %d rows deleted (%.1f%%), more than %.1f%%", layout.deletedRows(),
                    layout.physicalRows(), 100 * layout.deletedFraction(), 100 * maxDeletedFraction);
        }
        return null;
    }

    /** @return Lance's options for this policy: the target rows, deletions materialised above the fraction */
    CompactionOptions lanceOptions() {
        return CompactionOptions.builder().withTargetRowsPerFragment(targetRowsPerFragment)
                .withMaterializeDeletions(true).withMaterializeDeletionsThreshold((float) maxDeletedFraction).build();
    }

    /** Builder of a {@link CompactionPolicy}. */
    public static final class Builder {
        private long targetRowsPerFragment;
        private int minSmallFragments;
        private double maxDeletedFraction;

        private Builder(CompactionPolicy from) {
            this.targetRowsPerFragment = from.targetRowsPerFragment;
            this.minSmallFragments = from.minSmallFragments;
            this.maxDeletedFraction = from.maxDeletedFraction;
        }

        /** @param rows rows per rewritten fragment, &ge; 1 */
        public Builder targetRowsPerFragment(long rows) {
            this.targetRowsPerFragment = rows;
            return this;
        }

        /** @param n compact when the table has more small fragments than this, &ge; 0 */
        public Builder minSmallFragments(int n) {
            this.minSmallFragments = n;
            return this;
        }

        /** @param fraction compact when more than this share of the physical rows is deleted, in [0, 1] */
        public Builder maxDeletedFraction(double fraction) {
            this.maxDeletedFraction = fraction;
            return this;
        }

        /** @throws IllegalArgumentException naming the value out of range */
        public CompactionPolicy build() {
            return new CompactionPolicy(targetRowsPerFragment, minSmallFragments, maxDeletedFraction);
        }
    }
}
