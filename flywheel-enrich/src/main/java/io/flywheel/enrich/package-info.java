/**
 * Frame enrichment: decodes camera images, computes per-frame quality and similarity columns
 * (sharpness, static, pHash, gripper state, phase) and image embeddings, and writes them to the
 * lake as new table versions.
 */
package io.flywheel.enrich;
