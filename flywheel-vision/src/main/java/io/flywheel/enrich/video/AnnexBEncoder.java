package io.flywheel.enrich.video;

import static org.bytedeco.ffmpeg.global.avcodec.AV_PKT_FLAG_KEY;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.flywheel.enrich.RgbImage;

/**
 * Encodes {@link RgbImage}s to an H.264 Annex B byte stream, one access unit per frame: the
 * payload of foxglove.CompressedVideo messages with {@code format = "h264"} (ITU-T H.264 Annex B;
 * every keyframe is an IDR access unit that repeats the SPS and PPS, no B frames). Used by the
 * simulator and tests to write video topics; the encoder is chosen as in {@link EncoderOptions}
 * (libopenh264 in the org.bytedeco:ffmpeg build), and it must be an H.264 encoder.
 *
 * <p>Not thread-safe; close it to free the native encoder.
 */
public final class AnnexBEncoder implements AutoCloseable {
    private final Encoder enc;

    private AnnexBEncoder(Encoder enc) {
        this.enc = enc;
    }

    /**
     * @param width   frame width in pixels, even
     * @param height  frame height in pixels, even
     * @param options frame rate, keyframe interval, bit rate, encoder
     * @return an open encoder; close it
     * @throws IllegalArgumentException for odd sizes, an unknown encoder, or one that does not
     *     produce H.264
     */
    public static AnnexBEncoder open(int width, int height, EncoderOptions options) {
        Encoder e = new Encoder(width, height, options, false);
        if (e.ctx.codec_id() != org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_ID_H264) {
            String n = e.name;
            e.close();
            throw new IllegalArgumentException("encoder " + n + " does not produce H.264; Annex B output needs an H.264 encoder");
        }
        return new AnnexBEncoder(e);
    }

    /** @return the FFmpeg encoder in use, e.g. {@code libopenh264} */
    public String encoderName() {
        return enc.name;
    }

    /**
     * @param image the next frame, same size as the stream
     * @return the access units that became ready (one per frame for the encoders used here)
     * @throws IOException when the encoder fails
     * @throws IllegalArgumentException when the image size differs from the stream's
     */
    public List<EncodedUnit> encode(RgbImage image) throws IOException {
        List<EncodedUnit> out = new ArrayList<>(1);
        enc.encode(image, p -> out.add(unit(p)));
        return out;
    }

    /**
     * @return the access units still buffered in the encoder
     * @throws IOException when the encoder fails
     */
    public List<EncodedUnit> finish() throws IOException {
        List<EncodedUnit> out = new ArrayList<>();
        enc.finish(p -> out.add(unit(p)));
        return out;
    }

    private static EncodedUnit unit(org.bytedeco.ffmpeg.avcodec.AVPacket p) {
        byte[] b = new byte[p.size()];
        p.data().position(0).get(b);
        return new EncodedUnit(p.pts(), (p.flags() & AV_PKT_FLAG_KEY) != 0, b);
    }

    /** Frees the native encoder. */
    @Override
    public void close() {
        enc.close();
    }
}
