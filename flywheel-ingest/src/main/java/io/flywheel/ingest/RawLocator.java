package io.flywheel.ingest;

/**
 * Where the bytes of one camera image live in a raw file, so they can be read back without a copy
 * ({@link LocatorReader}).
 *
 * <p>Two shapes:
 * <ul>
 *   <li>{@code chunkOffset >= 0}: the image sits inside a compressed MCAP Chunk record (MCAP spec,
 *       "Chunk", op 0x06). {@code chunkOffset} is the absolute file offset of that record's opcode byte;
 *       {@code offset} and {@code length} address the image bytes inside the chunk's <em>decompressed</em>
 *       records; {@code compression} is the chunk's compression ({@code "zstd"} or {@code "lz4"}).</li>
 *   <li>{@code chunkOffset == -1}: the image is a plain byte range of the file (a message outside any
 *       chunk, an uncompressed chunk, or a TFRecord bytes value): {@code offset} is absolute in the
 *       file, {@code compression} is {@code ""}.</li>
 * </ul>
 * The range always covers the image payload itself ({@code CompressedImage.data} / {@code Image.data}),
 * not the whole message.
 *
 * @param uri absolute {@code file:} URI of the raw file
 * @param chunkOffset absolute offset of the MCAP Chunk record, or -1 for a plain range
 * @param offset offset of the first image byte (in the decompressed chunk records, or absolute)
 * @param length number of image bytes
 * @param compression {@code "zstd"}, {@code "lz4"} or {@code ""}
 * @param format image format: {@code "jpeg"}, {@code "png"}, or a raw pixel encoding such as {@code "rgb8"}
 * @param width pixels per row, 0 when not known (compressed images)
 * @param height rows, 0 when not known
 */
public record RawLocator(String uri, long chunkOffset, long offset, int length, String compression, String format,
                         int width, int height) {
    public RawLocator {
        if (uri == null || offset < 0 || length < 0 || chunkOffset < -1) {
            throw new IllegalArgumentException("bad locator: " + uri + " chunk " + chunkOffset + " offset " + offset
                    + " length " + length);
        }
        compression = compression == null ? "" : compression;
        format = format == null ? "" : format;
    }

    /** @return true when the bytes are a plain range of the file (no chunk to decompress) */
    public boolean isPlainRange() {
        return chunkOffset < 0;
    }
}
