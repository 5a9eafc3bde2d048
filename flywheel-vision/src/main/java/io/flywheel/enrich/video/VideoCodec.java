package io.flywheel.enrich.video;

import java.util.Locale;

/**
 * The video codecs Flywheel decodes, with the {@code format} strings foxglove.CompressedVideo uses
 * for them.
 *
 * <ul>
 *   <li>{@link #H264}: ITU-T H.264 | ISO/IEC 14496-10 (AVC), format {@code "h264"};</li>
 *   <li>{@link #H265}: ITU-T H.265 | ISO/IEC 23008-2 (HEVC), format {@code "h265"}.</li>
 * </ul>
 * Both are carried as an Annex B byte stream in CompressedVideo messages and as
 * length-prefixed samples in MP4 (ISO/IEC 14496-15).
 */
public enum VideoCodec {
    /** H.264 / AVC. */
    H264("h264"),
    /** H.265 / HEVC. */
    H265("h265");

    private final String format;

    VideoCodec(String format) {
        this.format = format;
    }

    /** @return the foxglove.CompressedVideo {@code format} value, e.g. {@code "h264"} */
    public String format() {
        return format;
    }

    /**
     * @param format a foxglove.CompressedVideo {@code format} value; case is ignored and
     *     {@code "hevc"}, {@code "avc"} are accepted as aliases
     * @return the codec
     * @throws IllegalArgumentException for any other format (vp9, av1, ...), naming it
     */
    public static VideoCodec fromFormat(String format) {
        String f = format == null ? "" : format.trim().toLowerCase(Locale.ROOT);
        switch (f) {
            case "h264":
            case "avc":
                return H264;
            case "h265":
            case "hevc":
                return H265;
            default:
                throw new IllegalArgumentException("unsupported video format '" + format + "': expected h264 or h265");
        }
    }
}
