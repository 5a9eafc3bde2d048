/**
 * The rows of the lake's ingest tables ({@code raw_files}, {@code episodes}, {@code frames}) and curation tables
 * ({@code trainsets}, {@code trainset_episodes}, {@code trainset_samples}, {@code episode_groups},
 * {@code frame_groups}) as plain immutable values,
 * with no storage types, so that the stages that produce them (ingest, enrich) run anywhere, Spark tasks included.
 * The lake ({@code io.flywheel.lake}) turns them into Arrow and Lance.
 */
package io.flywheel.rows;
