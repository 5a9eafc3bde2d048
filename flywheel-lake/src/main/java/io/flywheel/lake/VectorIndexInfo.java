package io.flywheel.lake;

/**
 * An existing vector index of an embedding column ({@link LakeTable#vectorIndex}).
 *
 * @param name the index name, e.g. {@code emb_mobilenet_v2_mac_ivf_pq}
 * @param type Lance's index type, e.g. {@code IVF_PQ}
 * @param rowsIndexed rows the index covers
 * @param rowsUnindexed rows of the table it does not cover (appended or updated since it was built or refreshed);
 *     searches scan them flat and merge them with the index's candidates
 */
public record VectorIndexInfo(String name, String type, long rowsIndexed, long rowsUnindexed) {}
