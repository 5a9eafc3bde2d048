package io.flywheel.curate;

/**
 * One nearest-neighbour hit of an exact search.
 *
 * @param row row index of the hit in the searched vector set
 * @param distance cosine distance {@code 1 - dot(query, row)} for L2-normalised vectors, 0..2
 */
public record Neighbour(int row, float distance) {}
