/**
 * Curation: near-duplicate grouping of frames (pHash, Hamming distance) and episodes (embedding
 * cosine distance), nearest-neighbour mining through a Lance vector index, and tagged training
 * sets with lineage.
 */
package io.flywheel.curate;
