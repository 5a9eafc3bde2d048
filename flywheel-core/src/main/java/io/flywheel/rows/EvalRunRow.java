package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code eval_runs}: one evaluation of one policy (see {@code io.flywheel.lake.EvalTables}).
 *
 * @param runId the run's id, unique in the lake; not null
 * @param policyVersion the policy evaluated ({@code policies.policy_version}); not null
 * @param startedAtNs when the run started, int64 ns since the Unix epoch (the ingest time when the results do not
 *     say)
 * @param configJson a JSON object: the run's configuration (source file, simulator seed, true rates, ...); not null
 * @param episodeCount the eval episodes of the run
 */
public record EvalRunRow(String runId, String policyVersion, long startedAtNs, String configJson, long episodeCount) {
    public EvalRunRow {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(policyVersion, "policyVersion");
        Objects.requireNonNull(configJson, "configJson");
    }
}
