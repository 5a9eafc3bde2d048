package io.flywheel.lake;

import java.util.Objects;

/**
 * Where one camera image of a frame lives in the raw layer (never copied).
 *
 * <p>Plain range ({@code chunkOffset == -1}): the message data is bytes {@code [offset,
 * offset+length)} of {@code rawUri}. Chunked: read the MCAP Chunk record at absolute file offset
 * {@code chunkOffset}, decompress its records with {@code compression}, and take bytes
 * {@code [offset, offset+length)} of the decompressed records (MCAP spec, "Chunk" record; or a ROS 1 bag chunk
 * record, op 0x05, when the raw file is a bag). {@code compression} may end in {@code +base64} or
 * {@code +json:<path>} when the range holds the image's base64 text or a whole JSON message (see
 * {@code io.flywheel.ingest.RawLocator#storedCompression()}; {@code RawLocator.fromStored} turns these fields
 * back into a locator that {@code LocatorReader} reads).
 *
 * @param topic camera topic, not null
 * @param rawUri raw file, not null
 * @param chunkOffset absolute offset of the Chunk record in bytes, or -1 for a plain range
 * @param offset bytes, see above, &ge; 0
 * @param length bytes, &ge; 0
 * @param compression {@code ""}, {@code zstd}, {@code lz4} or {@code bz2}, optionally followed by {@code +base64} or
 *     {@code +json:<path>}; not null
 * @param residualNs |image time - frame time| in ns, nullable
 */
public record ImageLocator(String topic, String rawUri, long chunkOffset, long offset, long length,
        String compression, Long residualNs) {
    public ImageLocator {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(rawUri, "rawUri");
        Objects.requireNonNull(compression, "compression");
        if (chunkOffset < -1 || offset < 0 || length < 0) {
            throw new IllegalArgumentException("image locator " + topic + " in " + rawUri
                    + ": chunkOffset >= -1, offset >= 0 and length >= 0 expected, got " + chunkOffset
                    + ", " + offset + ", " + length);
        }
    }

    /** @return true when {@code offset}/{@code length} are a plain file range */
    public boolean plain() {
        return chunkOffset == -1;
    }
}
