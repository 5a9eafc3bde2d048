package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code eval_episodes}: one rollout of an evaluation run (see {@code io.flywheel.lake.EvalTables}).
 *
 * @param runId the run ({@code eval_runs.run_id}); not null
 * @param episodeId the rollout's episode id: an {@code episodes.episode_id} when the rollout was recorded and
 *     ingested, else an id of the results file; not null
 * @param task task type, e.g. {@code pick_place}; not null
 * @param object object class, e.g. {@code glass_cup}; not null
 * @param lighting lighting condition, e.g. {@code dim}; not null
 * @param scene scene, or null
 * @param robotId robot body or unit, e.g. {@code arm-7}; not null
 * @param success whether the rollout succeeded
 * @param durationNs the rollout's duration in ns, or null when not known
 * @param failureMode why it failed ({@code slip}, {@code collision}, ...), or null (always null for a success)
 * @param intervention whether a person intervened
 */
public record EvalEpisodeRow(String runId, String episodeId, String task, String object, String lighting,
        String scene, String robotId, boolean success, Long durationNs, String failureMode, boolean intervention) {
    public EvalEpisodeRow {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(episodeId, "episodeId");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(object, "object");
        Objects.requireNonNull(lighting, "lighting");
        Objects.requireNonNull(robotId, "robotId");
    }
}
