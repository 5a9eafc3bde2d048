package io.flywheel.fleet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.flywheel.testkit.SharedData;

/**
 * The robot-side frame filter on frames whose decisions can be worked out by hand: 30 Hz log times {@code t(i) =
 * round(i * 1e9 / 30)} ns, crafted pHashes (bit patterns) and the real WidowX JPEGs of shared/data.
 */
class FrameFilterTest {
    static long t(int i) {
        return Math.round(i * 1e9 / 30);
    }

    /** @return the indices of the frames the filter skips */
    static List<Integer> skipped(FrameFilter f, long[] hashes) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < hashes.length; i++) {
            if (!f.offer("/cam", t(i), hashes[i]).send()) {
                out.add(i);
            }
        }
        return out;
    }

    /** Ten frames of one JPEG, then another scene: frames 1-9 are skipped as repeats of frame 0, frame 10 is sent. */
    @Test
    void tenIdenticalFramesThenADifferentOne() throws Exception {
        byte[] same = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move0.jpg"));
        byte[] other = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/top_down_cam/td_move5.jpg"));
        FrameFilter f = FrameFilter.builder(4).build();
        List<Integer> skipped = new ArrayList<>();
        for (int i = 0; i < 11; i++) {
            FrameFilter.Decision d = f.offerImage("/cam", t(i), i < 10 ? same : other);
            if (!d.send()) {
                skipped.add(i);
                assertEquals(t(0), d.repeatsLogTimeNs(), "frame " + i + " repeats frame 0");
                assertEquals(0, d.hammingDistance());
                assertEquals(4, d.thresholdBits());
            } else if (i == 10) {
                assertTrue(d.hammingDistance() >= 20, "another scene: " + d.hammingDistance() + " bits");
            }
        }
        assertEquals(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9), skipped);
    }

    /**
     * A scene drifting one bit per frame (hashes 0, 1, 11, 111, 1111 in binary; t = 2): frames 1 and 2 are within 2
     * bits of frame 0, frame 3 is 3 bits from it and is sent, frame 4 is 1 bit from frame 3. Against the last frame
     * seen instead of sent, every frame would be 1 bit from its predecessor and all four skipped.
     */
    @Test
    void framesAreComparedWithTheLastFrameSentNotTheLastSeen() {
        FrameFilter f = FrameFilter.builder(2).build();
        assertEquals(List.of(1, 2, 4), skipped(f, new long[] {0b0, 0b1, 0b11, 0b111, 0b1111}));
        FrameFilter.Decision d = f.offer("/cam", t(5), 0b1111);
        assertEquals(t(3), d.repeatsLogTimeNs(), "the last frame sent is frame 3");
    }

    /** A static scene still sends a keyframe once the max skip interval (1 s) has passed, or after n skips. */
    @Test
    void keyframesBoundTheTimeBetweenFramesSent() {
        long[] still = new long[70];
        FrameFilter byTime = FrameFilter.builder(4).build();
        List<Integer> sent = new ArrayList<>();
        for (int i = 0; i < still.length; i++) {
            if (byTime.offer("/cam", t(i), 0L).send()) {
                sent.add(i);
            }
        }
        // t(30) - t(0) is exactly 1 s, not more: frame 31 is the first keyframe, then 62
        assertEquals(List.of(0, 31, 62), sent);
        FrameFilter byCount = FrameFilter.builder(4).maxConsecutiveSkips(5).maxSkipInterval(Duration.ofHours(1))
                .build();
        List<Integer> skippedByCount = skipped(byCount, new long[14]);
        assertEquals(List.of(1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 13), skippedByCount);
    }

    @Test
    void thresholdsArePerTopicAndMinusOneSendsEveryFrame() {
        FrameFilter f = FrameFilter.builder(0).threshold("/wrist", 6).threshold("/depth", -1).build();
        assertTrue(f.offer("/head", t(0), 0b0).send());
        assertTrue(f.offer("/head", t(1), 0b1).send(), "1 bit is past the default threshold 0");
        assertFalse(f.offer("/head", t(2), 0b1).send(), "0 bits is within it");
        assertTrue(f.offer("/wrist", t(0), 0b0).send());
        assertFalse(f.offer("/wrist", t(1), 0b111111).send(), "6 bits, within the topic's 6");
        assertTrue(f.offer("/depth", t(0), 0L).send());
        assertTrue(f.offer("/depth", t(1), 0L).send(), "-1: every frame sent");
        FrameFilter fresh = f.copy();
        assertTrue(fresh.offer("/head", t(3), 0b1).send(), "a copy has seen no frame: its first one is sent");
        assertThrows(IllegalArgumentException.class, () -> FrameFilter.builder(65));
        assertThrows(IllegalArgumentException.class, () -> FrameFilter.builder(4).threshold("/x", -2));
    }
}
