package io.flywheel.enrich.video;

import java.util.ArrayList;
import java.util.List;

/**
 * NAL units of an Annex B byte stream (ITU-T H.264 Annex B "Byte stream format", B.2; the same
 * syntax in ITU-T H.265 Annex B): each NAL unit is preceded by the start code prefix
 * {@code 00 00 01}, optionally with a leading {@code zero_byte} ({@code 00 00 00 01}); trailing
 * zero bytes before the next start code are not part of the NAL unit.
 *
 * <p>Used to validate CompressedVideo payloads before they reach the decoder and to tell
 * keyframes: H.264 {@code nal_unit_type} 5 (IDR slice, Table 7-1), H.265 types 16..23 (IRAP:
 * BLA, IDR, CRA, Table 7-1 of H.265). Stateless and thread-safe.
 */
public final class AnnexB {
    private AnnexB() {}

    /**
     * One NAL unit inside a byte array.
     *
     * @param offset byte offset of the NAL unit header (just after the start code)
     * @param length bytes of the NAL unit, header included, trailing zero bytes excluded
     * @param type   {@code nal_unit_type}: H.264 5 bits (1 slice, 5 IDR, 6 SEI, 7 SPS, 8 PPS,
     *               9 AUD), H.265 6 bits (0..9 slices, 16..23 IRAP, 32 VPS, 33 SPS, 34 PPS)
     */
    public record NalUnit(int offset, int length, int type) {}

    /**
     * @param data an Annex B access unit
     * @return the index of the first byte after the first start code prefix if {@code data}
     *     begins with zero or more {@code 00} bytes followed by {@code 01} (at least two zeros),
     *     else -1
     */
    public static int firstNalOffset(byte[] data) {
        int zeros = 0;
        for (int i = 0; i < data.length; i++) {
            int b = data[i] & 0xFF;
            if (b == 0) {
                zeros++;
            } else if (b == 1 && zeros >= 2) {
                return i + 1;
            } else {
                return -1;
            }
        }
        return -1;
    }

    /**
     * Splits an Annex B access unit into NAL units.
     *
     * @param codec H.264 or H.265, which decides how the NAL header is read
     * @param data  the bytes; must begin with a start code (see {@link #firstNalOffset})
     * @return the NAL units in order; empty when {@code data} does not begin with a start code
     */
    public static List<NalUnit> nalUnits(VideoCodec codec, byte[] data) {
        List<NalUnit> out = new ArrayList<>();
        int start = firstNalOffset(data);
        if (start < 0) {
            return out;
        }
        while (start < data.length) {
            // Find the next start code prefix 00 00 01 at or after start.
            int next = -1;
            for (int i = start; i + 2 < data.length; i++) {
                if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) {
                    next = i;
                    break;
                }
            }
            int end = next < 0 ? data.length : next;
            int nalEnd = end;
            while (nalEnd > start && data[nalEnd - 1] == 0) {
                nalEnd--; // trailing_zero_8bits / zero_byte of the next start code
            }
            if (nalEnd > start) {
                int h = data[start] & 0xFF;
                int type = codec == VideoCodec.H264 ? h & 0x1F : (h >> 1) & 0x3F;
                out.add(new NalUnit(start, nalEnd - start, type));
            }
            if (next < 0) {
                break;
            }
            start = next + 3;
        }
        return out;
    }

    /**
     * @param codec H.264 or H.265
     * @param data  an Annex B access unit
     * @return true when it holds an IDR slice (H.264) or an IRAP picture (H.265)
     */
    public static boolean isKeyframe(VideoCodec codec, byte[] data) {
        for (NalUnit n : nalUnits(codec, data)) {
            if (codec == VideoCodec.H264 ? n.type() == 5 : n.type() >= 16 && n.type() <= 23) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param codec H.264 or H.265
     * @param data  an Annex B access unit
     * @return true when it carries a sequence parameter set (H.264 type 7, H.265 type 33)
     */
    public static boolean hasSequenceParameterSet(VideoCodec codec, byte[] data) {
        int sps = codec == VideoCodec.H264 ? 7 : 33;
        for (NalUnit n : nalUnits(codec, data)) {
            if (n.type() == sps) {
                return true;
            }
        }
        return false;
    }
}
