package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/** NAL unit splitting on hand-built byte streams whose layout is written out below. */
class AnnexBTest {
    private static byte[] b(int... v) {
        byte[] out = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (byte) v[i];
        }
        return out;
    }

    @Test
    void h264FourAndThreeByteStartCodesAndTrailingZeros() {
        // 00 00 00 01 | 67 42 (SPS) | 00 00 01 | 68 ce (PPS) | 00 00 00 00 01 | 65 88 84 (IDR) 00 (trailing zero)
        byte[] au = b(0, 0, 0, 1, 0x67, 0x42, 0, 0, 1, 0x68, 0xCE, 0, 0, 0, 0, 1, 0x65, 0x88, 0x84, 0);
        List<AnnexB.NalUnit> n = AnnexB.nalUnits(VideoCodec.H264, au);
        assertEquals(List.of(new AnnexB.NalUnit(4, 2, 7), new AnnexB.NalUnit(9, 2, 8), new AnnexB.NalUnit(16, 3, 5)), n);
        assertTrue(AnnexB.isKeyframe(VideoCodec.H264, au));
        assertTrue(AnnexB.hasSequenceParameterSet(VideoCodec.H264, au));
        assertEquals(4, AnnexB.firstNalOffset(au));
        // a non-IDR slice (type 1) is no keyframe
        assertFalse(AnnexB.isKeyframe(VideoCodec.H264, b(0, 0, 1, 0x41, 0x9A, 0x02)));
    }

    @Test
    void h265HeaderIsSixBitsAfterTheForbiddenBit() {
        // VPS type 32: 0x40 0x01; SPS 33: 0x42 0x01; PPS 34: 0x44 0x01; IDR_W_RADL 19: 0x26 0x01; TRAIL_R 1: 0x02 0x01
        byte[] key = b(0, 0, 0, 1, 0x40, 0x01, 0x0C, 0, 0, 0, 1, 0x42, 0x01, 0x01, 0, 0, 0, 1, 0x44, 0x01, 0xC1,
                0, 0, 0, 1, 0x26, 0x01, 0xAF);
        List<AnnexB.NalUnit> n = AnnexB.nalUnits(VideoCodec.H265, key);
        assertEquals(List.of(32, 33, 34, 19), n.stream().map(AnnexB.NalUnit::type).toList());
        assertTrue(AnnexB.isKeyframe(VideoCodec.H265, key));
        assertTrue(AnnexB.hasSequenceParameterSet(VideoCodec.H265, key));
        assertFalse(AnnexB.isKeyframe(VideoCodec.H265, b(0, 0, 1, 0x02, 0x01, 0xD0)));
    }

    @Test
    void withoutALeadingStartCodeThereAreNoNalUnits() {
        assertEquals(-1, AnnexB.firstNalOffset(b(0, 0, 0x1C, 0x65, 1, 2)));
        assertEquals(-1, AnnexB.firstNalOffset(b(0, 1, 0x65)), "one zero byte is no start code");
        assertEquals(List.of(), AnnexB.nalUnits(VideoCodec.H264, b(0x65, 0, 0, 1, 0x41)));
        assertEquals(-1, AnnexB.firstNalOffset(new byte[0]));
    }

    @Test
    void formatNames() {
        assertEquals(VideoCodec.H264, VideoCodec.fromFormat("h264"));
        assertEquals(VideoCodec.H265, VideoCodec.fromFormat("H265"));
        assertEquals(VideoCodec.H265, VideoCodec.fromFormat("hevc"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> VideoCodec.fromFormat("av1"));
        assertTrue(e.getMessage().contains("'av1'"));
    }

    @Test
    void h265DecoderRejectsAGarbageKeyframeWithAClearError() throws Exception {
        // No HEVC encoder ships in the LGPL FFmpeg build, so only the error path of H.265 is testable here.
        byte[] bogus = b(0, 0, 0, 1, 0x40, 0x01, 0x0C, 0, 0, 0, 1, 0x42, 0x01, 0x01, 0, 0, 0, 1, 0x44, 0x01, 0xC1,
                0, 0, 0, 1, 0x26, 0x01, 0xAF, 0x12, 0x34);
        try (AnnexBDecoder d = AnnexBDecoder.open(VideoCodec.H265, "hevc-test")) {
            VideoFormatException e = assertThrows(VideoFormatException.class, () -> {
                d.decode(bogus, 5L);
                d.flush();
            });
            assertTrue(e.getMessage().startsWith("hevc-test"), e.getMessage());
        }
    }
}
