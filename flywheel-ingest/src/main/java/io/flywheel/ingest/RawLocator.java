package io.flywheel.ingest;

/**
 * Where the bytes of one camera image live in a raw file, so they can be read back without a copy
 * ({@link LocatorReader}).
 *
 * <p>Two shapes:
 * <ul>
 *   <li>{@code chunkOffset >= 0}: the bytes sit inside a compressed chunk. In an MCAP file (MCAP spec,
 *       "Chunk", op 0x06) {@code chunkOffset} is the absolute file offset of that record's opcode byte and
 *       {@code compression} is {@code "zstd"} or {@code "lz4"}; in a ROS 1 bag (format 2.0, "Chunk", op 0x05)
 *       it is the absolute offset of the chunk record's header length and {@code compression} is
 *       {@code "bz2"} or {@code "lz4"}. {@code offset} and {@code length} address the bytes inside the chunk's
 *       <em>decompressed</em> records. {@link LocatorReader} tells the two containers apart by the file's
 *       magic bytes.</li>
 *   <li>{@code chunkOffset == -1}: the bytes are a plain byte range of the file (a message outside any
 *       chunk, an uncompressed MCAP chunk or ROS 1 bag chunk ({@code compression=none}), or a TFRecord bytes
 *       value): {@code offset} is absolute in the file, {@code compression} is {@code ""}.</li>
 * </ul>
 * What the range holds, by {@code payload}:
 * <ul>
 *   <li>{@code ""}: the image bytes themselves ({@code CompressedImage.data} / {@code Image.data} of a CDR or
 *       ROS 1 message, or the {@code data} bytes field of a protobuf {@code foxglove.CompressedImage} /
 *       {@code RawImage}, whose bytes the protobuf wire format stores unchanged).</li>
 *   <li>{@code "base64"}: the base64 text of the image (the contents of a JSON string without escapes, as
 *       Foxglove's JSON encoding writes bytes fields; RFC 4648 section 4); decode it to get the image.</li>
 *   <li>{@code "json:<field path>"}: a whole JSON message; the image is the base64 string at the dotted field
 *       path (e.g. {@code json:data}), used when the string holds JSON escapes.</li>
 * </ul>
 *
 * @param uri absolute {@code file:} URI of the raw file
 * @param chunkOffset absolute offset of the chunk record, or -1 for a plain range
 * @param offset offset of the first byte (in the decompressed chunk records, or absolute)
 * @param length number of bytes
 * @param compression {@code "zstd"}, {@code "lz4"}, {@code "bz2"} or {@code ""}
 * @param format image format: {@code "jpeg"}, {@code "png"}, a raw pixel encoding such as {@code "rgb8"}, or
 *     {@code "h264"} / {@code "h265"} for one access unit (Annex B) of a {@code foxglove.CompressedVideo}
 *     message, or one sample (length-prefixed NAL units; {@link LocatorReader} gives it as Annex B) of a sidecar MP4
 *     ({@link Sidecars}), which decodes only in stream order from a keyframe
 * @param width pixels per row, 0 when not known (compressed images)
 * @param height rows, 0 when not known
 * @param payload how the image is held in the range: {@code ""}, {@code "base64"} or {@code "json:<path>"}
 */
public record RawLocator(String uri, long chunkOffset, long offset, int length, String compression, String format,
                         int width, int height, String payload) {
    public RawLocator {
        if (uri == null || offset < 0 || length < 0 || chunkOffset < -1) {
            throw new IllegalArgumentException("bad locator: " + uri + " chunk " + chunkOffset + " offset " + offset
                    + " length " + length);
        }
        compression = compression == null ? "" : compression;
        format = format == null ? "" : format;
        payload = payload == null ? "" : payload;
        if (!payload.isEmpty() && !payload.equals("base64") && !(payload.startsWith("json:") && payload.length() > 5)) {
            throw new IllegalArgumentException("bad locator payload '" + payload + "': expected \"\", base64 or json:<path>");
        }
    }

    /** A locator whose range holds the image bytes themselves (payload {@code ""}). */
    public RawLocator(String uri, long chunkOffset, long offset, int length, String compression, String format,
                      int width, int height) {
        this(uri, chunkOffset, offset, length, compression, format, width, height, "");
    }

    /** @return true when the bytes are a plain range of the file (no chunk to decompress) */
    public boolean isPlainRange() {
        return chunkOffset < 0;
    }

    /**
     * @return the chunk compression and payload in one string, as the lake's {@code images.compression} column
     *     stores them: {@code compression}, followed by {@code "+" + payload} when the payload is not {@code ""}
     *     (e.g. {@code "zstd+base64"}, {@code "+json:data"})
     */
    public String storedCompression() {
        return payload.isEmpty() ? compression : compression + "+" + payload;
    }

    /**
     * The inverse of {@link #storedCompression()}: a locator from the fields of a lake image row.
     *
     * @throws IllegalArgumentException when a field is out of range
     */
    public static RawLocator fromStored(String uri, long chunkOffset, long offset, long length, String storedCompression) {
        return fromStored(uri, chunkOffset, offset, length, storedCompression, "", 0, 0);
    }

    /**
     * {@link #fromStored(String, long, long, long, String)} with the image's format and size (lake
     * image rows keep them in their own fields).
     *
     * @param format image format or raw encoding, "" or null when unknown
     * @param width pixels per row, 0 or null when unknown
     * @param height rows, 0 or null when unknown
     */
    public static RawLocator fromStored(String uri, long chunkOffset, long offset, long length, String storedCompression,
                                        String format, Integer width, Integer height) {
        String c = storedCompression == null ? "" : storedCompression;
        int plus = c.indexOf('+');
        if (length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("locator length " + length + " in " + uri + " exceeds 2^31-1 bytes");
        }
        return new RawLocator(uri, chunkOffset, offset, (int) length, plus < 0 ? c : c.substring(0, plus),
                format == null ? "" : format, width == null ? 0 : width, height == null ? 0 : height,
                plus < 0 ? "" : c.substring(plus + 1));
    }
}
