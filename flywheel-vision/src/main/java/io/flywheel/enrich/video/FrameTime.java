package io.flywheel.enrich.video;

/**
 * The presentation time of a frame written by {@link Mp4VideoWriter}.
 *
 * @param index       0-based frame index in the file (episodes concatenated count on)
 * @param timestampNs {@code index * fpsDen / fpsNum} seconds in int64 nanoseconds, rounded
 * @param seconds     {@code index * fpsDen / fpsNum} in seconds: exactly what a decoder computes
 *                    from the stored pts and the track's time scale (ISO/IEC 14496-12), to the
 *                    last bit of the double
 */
public record FrameTime(long index, long timestampNs, double seconds) {}
