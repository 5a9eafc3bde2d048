package io.flywheel.enrich.image;

import java.util.Locale;
import java.util.Set;

/**
 * What a camera message's bytes are: a compressed file ({@code sensor_msgs/CompressedImage}: JPEG or PNG,
 * with {@code width}/{@code height} 0 since the file carries its size) or a raw pixel array
 * ({@code sensor_msgs/Image}: one of {@link #RAW_ENCODINGS}, with its size).
 *
 * <p>Raw arrays may have row padding: the row stride is {@code data.length / height} bytes, which must be at
 * least {@code width * bytesPerPixel} (ROS {@code step}). Multi-byte samples are little-endian unless
 * {@code bigEndian} (ROS {@code is_bigendian}).
 *
 * @param encoding {@code jpeg}, {@code png}, or a raw encoding (REP 104 / sensor_msgs/image_encodings names)
 * @param width pixels per row (raw), 0 for compressed
 * @param height rows (raw), 0 for compressed
 * @param bigEndian byte order of 16- and 32-bit raw samples
 * @param compressedDepth true for {@code compressedDepth} PNGs (a 12-byte header precedes the PNG)
 */
public record ImageFormat(String encoding, int width, int height, boolean bigEndian, boolean compressedDepth) {
    /** The raw {@code sensor_msgs/Image} encodings this decoder reads. */
    public static final Set<String> RAW_ENCODINGS =
            Set.of("rgb8", "bgr8", "rgba8", "bgra8", "mono8", "8uc1", "mono16", "16uc1", "32fc1");

    /** JPEG (ITU-T T.81 / JFIF). */
    public static final ImageFormat JPEG = new ImageFormat("jpeg", 0, 0, false, false);
    /** PNG (ISO/IEC 15948), 8 or 16 bits, grey, RGB or RGBA. */
    public static final ImageFormat PNG = new ImageFormat("png", 0, 0, false, false);

    public ImageFormat {
        encoding = encoding == null ? "" : encoding.toLowerCase(Locale.ROOT);
        if (RAW_ENCODINGS.contains(encoding) && (width <= 0 || height <= 0)) {
            throw new IllegalArgumentException("raw image encoding " + encoding + " needs a size, got " + width + "x"
                    + height);
        }
    }

    /** @return true for a raw pixel array (sensor_msgs/Image) */
    public boolean raw() {
        return RAW_ENCODINGS.contains(encoding);
    }

    /** @return bytes per pixel of a raw encoding, 0 for compressed */
    public int bytesPerPixel() {
        return switch (encoding) {
            case "rgb8", "bgr8" -> 3;
            case "rgba8", "bgra8", "32fc1" -> 4;
            case "mono8", "8uc1" -> 1;
            case "mono16", "16uc1" -> 2;
            default -> 0;
        };
    }

    /**
     * @param encoding a raw encoding, e.g. {@code rgb8}, {@code 16UC1} (case-insensitive)
     * @param width pixels per row
     * @param height rows
     * @return the format, little-endian samples
     * @throws IllegalArgumentException for an encoding not in {@link #RAW_ENCODINGS} or a size &le; 0
     */
    public static ImageFormat raw(String encoding, int width, int height) {
        String e = encoding == null ? "" : encoding.toLowerCase(Locale.ROOT).strip();
        if (!RAW_ENCODINGS.contains(e)) {
            throw new IllegalArgumentException("raw image encoding '" + encoding + "' is not supported; expected one of "
                    + "rgb8, bgr8, rgba8, bgra8, mono8, mono16, 16UC1, 32FC1");
        }
        return new ImageFormat(e, width, height, false, false);
    }

    /**
     * Reads a {@code sensor_msgs/CompressedImage.format} string: {@code jpeg}, {@code jpg}, {@code png}, or the
     * image_transport forms {@code "rgb8; jpeg compressed bgr8"}, {@code "bgr8; png compressed bgr8"},
     * {@code "16UC1; compressedDepth png"}. The codec named wins; a string naming none (e.g. empty) gives JPEG
     * when {@code sniff} starts with the JPEG marker FF D8, PNG for the PNG signature.
     *
     * @param format the message's format field
     * @param sniff the first bytes of the data, or null
     * @return JPEG or PNG
     * @throws IllegalArgumentException when the string names no codec and the bytes are neither
     */
    public static ImageFormat compressed(String format, byte[] sniff) {
        String f = format == null ? "" : format.toLowerCase(Locale.ROOT);
        if (f.contains("compresseddepth")) {
            return new ImageFormat("png", 0, 0, false, true);
        }
        if (f.contains("jpeg") || f.contains("jpg")) {
            return JPEG;
        }
        if (f.contains("png")) {
            return PNG;
        }
        if (sniff != null && sniff.length >= 2 && (sniff[0] & 0xFF) == 0xFF && (sniff[1] & 0xFF) == 0xD8) {
            return JPEG;
        }
        if (sniff != null && sniff.length >= 8 && (sniff[0] & 0xFF) == 0x89 && sniff[1] == 'P' && sniff[2] == 'N'
                && sniff[3] == 'G') {
            return PNG;
        }
        throw new IllegalArgumentException("image format '" + format + "' names no codec (expected jpeg or png, or a"
                + " raw encoding) and the bytes start with neither the JPEG marker FF D8 nor the PNG signature");
    }

    /**
     * A locator's format as the lake stores it: a raw encoding with its size, or a compressed format string.
     *
     * @param format encoding or CompressedImage format (null or empty: sniff the bytes)
     * @param width raw width, 0 when unknown
     * @param height raw height, 0 when unknown
     * @param sniff the first bytes of the data, or null
     * @return the format
     * @throws IllegalArgumentException when it cannot be told
     */
    public static ImageFormat of(String format, int width, int height, byte[] sniff) {
        String e = format == null ? "" : format.toLowerCase(Locale.ROOT).strip();
        if (RAW_ENCODINGS.contains(e)) {
            return raw(e, width, height);
        }
        return compressed(format, sniff);
    }
}
