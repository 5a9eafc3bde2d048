package io.flywheel.rows;

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
 * @param format image format: {@code jpeg}, {@code png} (or the CompressedImage format string) or a raw
 *     {@code sensor_msgs/Image} encoding such as {@code rgb8}; nullable (lakes ingested before it was recorded)
 * @param width width in pixels: known at ingest for raw images, filled in by enrich for compressed ones; nullable
 * @param height height in pixels; nullable
 */
public record ImageLocator(String topic, String rawUri, long chunkOffset, long offset, long length,
        String compression, Long residualNs, String format, Integer width, Integer height) {
    /** A locator without format and size (as before they were recorded). */
    public ImageLocator(String topic, String rawUri, long chunkOffset, long offset, long length, String compression,
            Long residualNs) {
        this(topic, rawUri, chunkOffset, offset, length, compression, residualNs, null, null, null);
    }

    /** @return the same locator with the decoded size */
    public ImageLocator withSize(int w, int h) {
        return new ImageLocator(topic, rawUri, chunkOffset, offset, length, compression, residualNs, format, w, h);
    }

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
