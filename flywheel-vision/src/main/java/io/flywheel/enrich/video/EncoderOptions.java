package io.flywheel.enrich.video;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Options for {@link Mp4VideoWriter} and {@link AnnexBEncoder}.
 *
 * @param fpsNum           frame rate numerator, &gt; 0 (frames per {@code fpsDen} seconds)
 * @param fpsDen           frame rate denominator, &gt; 0 (30000/1001 for NTSC 29.97)
 * @param keyframeInterval frames between keyframes (GOP size), &ge; 1; 1 makes every frame a
 *                         keyframe (fastest random seek, largest file)
 * @param bitRate          target bits per second, or 0 (default) for
 *                         {@link #DEFAULT_BITS_PER_PIXEL} bits per pixel per frame
 * @param encoder          FFmpeg encoder name, or null (default) for the first this build has
 *                         of {@link #PREFERRED_ENCODERS}
 * @param codecOptions     extra private options for the encoder, e.g. {@code crf=23} for libx264
 * @param threads          encoder threads, &ge; 1 (default 1)
 */
public record EncoderOptions(int fpsNum, int fpsDen, int keyframeInterval, long bitRate, String encoder,
                             Map<String, String> codecOptions, int threads) {
    /**
     * Encoders tried in order when none is named: libx264 (in GPL builds of FFmpeg), libopenh264
     * (Cisco's H.264 encoder, in the LGPL org.bytedeco:ffmpeg build this project uses), and
     * FFmpeg's own MPEG-4 Part 2 encoder as a last resort (not H.264).
     */
    public static final List<String> PREFERRED_ENCODERS = List.of("libx264", "libopenh264", "mpeg4");

    /**
     * Bits per pixel per frame of the automatic bit rate (at least 64 kbit/s): 0.5 gives
     * 1.54 Mbit/s for 640x480 at 10 fps, where real robot frames decode at 36-37 dB PSNR.
     */
    public static final double DEFAULT_BITS_PER_PIXEL = 0.5;

    /** @throws IllegalArgumentException when a number is out of range */
    public EncoderOptions {
        if (fpsNum <= 0 || fpsDen <= 0) {
            throw new IllegalArgumentException("frame rate must be positive, got " + fpsNum + "/" + fpsDen);
        }
        if (keyframeInterval < 1) {
            throw new IllegalArgumentException("keyframe interval must be >= 1, got " + keyframeInterval);
        }
        if (bitRate < 0) {
            throw new IllegalArgumentException("bit rate must be >= 0, got " + bitRate);
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        codecOptions = Map.copyOf(Objects.requireNonNull(codecOptions, "codecOptions"));
    }

    /** @return frames per second as a double */
    public double fps() {
        return (double) fpsNum / fpsDen;
    }

    /**
     * @param frameIndex 0-based frame index in the stream
     * @return the frame's presentation time in seconds, {@code frameIndex * fpsDen / fpsNum}
     */
    public double seconds(long frameIndex) {
        return (double) (frameIndex * fpsDen) / fpsNum;
    }

    /**
     * @param frameIndex 0-based frame index in the stream
     * @return the frame's presentation time in ns, rounded to nearest
     */
    public long nanos(long frameIndex) {
        return Ffmpeg.toNanos(frameIndex, fpsDen, fpsNum);
    }

    /** @return a builder: 30 fps, keyframe every 30 frames, automatic bit rate and encoder */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder for {@link EncoderOptions}. */
    public static final class Builder {
        private int fpsNum = 30;
        private int fpsDen = 1;
        private int keyframeInterval = 30;
        private long bitRate;
        private String encoder;
        private final Map<String, String> codecOptions = new LinkedHashMap<>();
        private int threads = 1;

        private Builder() {}

        /** @param fps whole frames per second (default 30) */
        public Builder fps(int fps) { return fps(fps, 1); }

        /** @param num frame rate numerator @param den denominator (e.g. 30000/1001) */
        public Builder fps(int num, int den) { this.fpsNum = num; this.fpsDen = den; return this; }

        /** @param frames GOP size: a keyframe every this many frames (default 30) */
        public Builder keyframeInterval(int frames) { this.keyframeInterval = frames; return this; }

        /** @param bitsPerSecond target bit rate, 0 for automatic (default) */
        public Builder bitRate(long bitsPerSecond) { this.bitRate = bitsPerSecond; return this; }

        /** @param name FFmpeg encoder name (libx264, libopenh264, mpeg4, ...), null for automatic */
        public Builder encoder(String name) { this.encoder = name; return this; }

        /** @param key encoder private option @param value its value */
        public Builder codecOption(String key, String value) { codecOptions.put(key, value); return this; }

        /** @param n encoder threads (default 1) */
        public Builder threads(int n) { this.threads = n; return this; }

        /** @return the options */
        public EncoderOptions build() {
            return new EncoderOptions(fpsNum, fpsDen, keyframeInterval, bitRate, encoder, codecOptions, threads);
        }
    }
}
