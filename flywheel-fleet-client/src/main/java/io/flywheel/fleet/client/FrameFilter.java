package io.flywheel.fleet.client;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

import io.flywheel.image.GreyFrame;
import io.flywheel.image.PerceptualHash;

/**
 * Decides, per camera topic, whether a frame is worth sending on a live stream: a frame whose 64-bit DCT pHash
 * ({@link PerceptualHash}, the hash enrich stores) is at most {@code t} bits (Hamming distance) from the hash of the
 * last frame <em>sent</em> on its topic is skipped, and the recording says so (a {@code SkippedFrame} naming the frame
 * it repeats). Comparing with the last frame sent, not the last one seen, bounds the drift: a scene changing a bit per
 * frame sends a frame as soon as it has moved {@code t + 1} bits from what the gateway has, instead of never.
 *
 * <p>Keyframes: a static scene still sends a frame when {@link Builder#maxSkipInterval} has passed since the last one
 * sent (default 1 s, by log time), or after {@link Builder#maxConsecutiveSkips} skips in a row (default: no limit), so
 * that a slow change below the threshold, or a viewer of the live stream, waits at most that long. The first frame of
 * a topic is always sent.
 *
 * <p>Thresholds: {@link Builder#threshold} for every topic, {@link Builder#threshold(String, int)} for one; a negative
 * threshold sends every frame of the topic. What t means, measured on real frames (flywheel-vision's
 * ImageMetricsTest): re-encoding a JPEG changes up to 4 bits; successive tic-tac-toe board states, one piece apart,
 * 0-4 bits over the shoulder and 4-12 top-down; different scenes at least 24. Thread-safe.
 */
public final class FrameFilter {
    /**
     * What to do with one frame.
     *
     * @param send whether to send it
     * @param repeatsLogTimeNs when skipped: the log time of the last frame sent on the topic, ns; else 0
     * @param hammingDistance the distance of its pHash to that frame's, bits; -1 for a topic's first frame
     * @param thresholdBits the topic's threshold
     * @param phash the frame's pHash
     */
    public record Decision(boolean send, long repeatsLogTimeNs, int hammingDistance, int thresholdBits, long phash) {}

    /** The last frame sent on a topic, and the skips since. */
    private static final class Last {
        long logTimeNs;
        long phash;
        int skips;
    }

    private final int threshold;
    private final Map<String, Integer> thresholds;
    private final int maxConsecutiveSkips;
    private final long maxSkipIntervalNs;
    private final Map<String, Last> last = new HashMap<>();

    private FrameFilter(int threshold, Map<String, Integer> thresholds, int maxConsecutiveSkips,
            long maxSkipIntervalNs) {
        this.threshold = threshold;
        this.thresholds = Map.copyOf(thresholds);
        this.maxConsecutiveSkips = maxConsecutiveSkips;
        this.maxSkipIntervalNs = maxSkipIntervalNs;
    }

    /**
     * @return a filter with the same settings that has seen no frame: what each live episode starts with (its first
     *     frame per topic is sent, and a skip never repeats a frame of another episode)
     */
    public FrameFilter copy() {
        return new FrameFilter(threshold, thresholds, maxConsecutiveSkips, maxSkipIntervalNs);
    }

    /**
     * @param thresholdBits the default threshold t, -1..64 bits (-1: send every frame)
     * @return a builder
     */
    public static Builder builder(int thresholdBits) {
        return new Builder(thresholdBits);
    }

    /** @return the threshold of {@code topic}, bits; negative when every frame is sent */
    public int thresholdOf(String topic) {
        return thresholds.getOrDefault(topic, threshold);
    }

    /**
     * Decides on a frame by its JPEG (or PNG) bytes: decoded by {@code javax.imageio} to grey, reduced and hashed in
     * pure Java ({@link GreyFrame#decode}, {@link PerceptualHash#of}); a frame smaller than 32 x 32 is always sent.
     *
     * @throws IOException when the image cannot be decoded
     */
    public Decision offerImage(String topic, long logTimeNs, byte[] encoded) throws IOException {
        OptionalLong h = hash(encoded);
        return h.isPresent() ? offer(topic, logTimeNs, h.getAsLong()) : new Decision(true, 0, -1, thresholdOf(topic), 0);
    }

    /**
     * @param encoded a JPEG or PNG
     * @return its pHash ({@link GreyFrame#decode}, {@link PerceptualHash#of}); empty for an image smaller than 32 x 32,
     *     which the filter always sends
     * @throws IOException when the image cannot be decoded
     */
    public static OptionalLong hash(byte[] encoded) throws IOException {
        GreyFrame g = GreyFrame.decode(encoded);
        return g.width() < PerceptualHash.SIDE || g.height() < PerceptualHash.SIDE ? OptionalLong.empty()
                : OptionalLong.of(PerceptualHash.of(g));
    }

    /**
     * Decides on a frame by its pHash; a frame decided to be sent becomes the topic's last frame sent.
     *
     * @param topic the camera topic
     * @param logTimeNs the frame's log time, ns
     * @param phash its pHash
     * @return send it, or skip it as a repeat of the last frame sent
     */
    public synchronized Decision offer(String topic, long logTimeNs, long phash) {
        Objects.requireNonNull(topic, "topic");
        int t = thresholdOf(topic);
        Last l = last.get(topic);
        if (l == null) {
            l = new Last();
            last.put(topic, l);
            return sent(l, logTimeNs, phash, -1, t);
        }
        int d = PerceptualHash.hammingDistance(l.phash, phash);
        boolean keyframe = logTimeNs - l.logTimeNs > maxSkipIntervalNs
                || (maxConsecutiveSkips > 0 && l.skips >= maxConsecutiveSkips);
        if (t < 0 || d > t || keyframe) {
            return sent(l, logTimeNs, phash, d, t);
        }
        l.skips++;
        return new Decision(false, l.logTimeNs, d, t, phash);
    }

    private static Decision sent(Last l, long logTimeNs, long phash, int d, int t) {
        l.logTimeNs = logTimeNs;
        l.phash = phash;
        l.skips = 0;
        return new Decision(true, 0, d, t, phash);
    }

    /** Builder of a {@link FrameFilter}. */
    public static final class Builder {
        private final int threshold;
        private final Map<String, Integer> thresholds = new HashMap<>();
        private int maxConsecutiveSkips;
        private Duration maxSkipInterval = Duration.ofSeconds(1);

        private Builder(int thresholdBits) {
            this.threshold = check(thresholdBits);
        }

        private static int check(int bits) {
            if (bits < -1 || bits > 64) {
                throw new IllegalArgumentException("a pHash threshold is -1 (off) or 0..64 bits, got " + bits);
            }
            return bits;
        }

        /** @param bits the threshold of one topic, -1 (every frame sent) or 0..64 */
        public Builder threshold(String topic, int bits) {
            thresholds.put(Objects.requireNonNull(topic, "topic"), check(bits));
            return this;
        }

        /** @param n send a frame after n skips in a row, &ge; 1; 0 for no limit (the default) */
        public Builder maxConsecutiveSkips(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("max consecutive skips must be >= 0, got " + n);
            }
            maxConsecutiveSkips = n;
            return this;
        }

        /** @param d send a frame when this much log time has passed since the last one sent (default 1 s) */
        public Builder maxSkipInterval(Duration d) {
            if (d.isNegative()) {
                throw new IllegalArgumentException("the max skip interval must be >= 0, got " + d);
            }
            maxSkipInterval = d;
            return this;
        }

        /** @return the filter */
        public FrameFilter build() {
            return new FrameFilter(threshold, thresholds, maxConsecutiveSkips, maxSkipInterval.toNanos());
        }
    }
}
