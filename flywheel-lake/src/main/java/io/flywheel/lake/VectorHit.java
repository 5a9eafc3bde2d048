package io.flywheel.lake;

/**
 * One nearest neighbour of a {@link VectorQuery}.
 *
 * @param id the row's id column value, as text
 * @param distance cosine distance {@code 1 - cos} to the query, in [0, 2] (exact when refined or flat)
 */
public record VectorHit(String id, float distance) {}
