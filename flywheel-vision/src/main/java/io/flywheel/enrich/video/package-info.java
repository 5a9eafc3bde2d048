/**
 * Video decoding and encoding for camera streams: H.264 (ITU-T H.264 | ISO/IEC 14496-10) and
 * H.265 (ITU-T H.265 | ISO/IEC 23008-2) through FFmpeg's libavcodec / libavformat, packaged for
 * Java by {@code org.bytedeco:ffmpeg} (LGPL build, linux-x86_64 natives bundled).
 *
 * <ul>
 *   <li>{@link io.flywheel.enrich.video.AnnexBDecoder} and {@link io.flywheel.enrich.video.McapVideo}:
 *       foxglove.CompressedVideo messages, one Annex B access unit per message (ITU-T H.264
 *       Annex B byte stream format), decoded frame by frame and timed by log time.</li>
 *   <li>{@link io.flywheel.enrich.video.Mp4VideoReader}: sidecar MP4 files (ISO/IEC 14496-12 ISO
 *       base media file format, ISO/IEC 14496-14 MP4, ISO/IEC 14496-15 AVC/HEVC sample format),
 *       frames with their presentation times.</li>
 *   <li>{@link io.flywheel.enrich.video.Mp4VideoWriter}: MP4 from RGB frames for the LeRobot
 *       export, episodes concatenated, exact per-frame timestamps;
 *       {@link io.flywheel.enrich.video.AnnexBEncoder}: Annex B access units for writing
 *       CompressedVideo topics.</li>
 * </ul>
 * Every class that holds native state is {@link java.lang.AutoCloseable}; bad input raises
 * {@link io.flywheel.enrich.video.VideoFormatException} naming the source and position.
 */
package io.flywheel.enrich.video;
