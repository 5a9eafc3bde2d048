package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code policies}: a model version that evaluation runs evaluate (see {@code io.flywheel.lake.EvalTables}).
 *
 * @param policyVersion the policy's version name, e.g. {@code pick-v7}; the key, not null
 * @param registeredAtNs when the lake first saw it, int64 ns since the Unix epoch
 * @param metadataJson a JSON object describing it (checkpoint, training set tag, ...), {@code {}} when nothing is
 *     known; not null
 */
public record PolicyRow(String policyVersion, long registeredAtNs, String metadataJson) {
    public PolicyRow {
        Objects.requireNonNull(policyVersion, "policyVersion");
        Objects.requireNonNull(metadataJson, "metadataJson");
    }
}
