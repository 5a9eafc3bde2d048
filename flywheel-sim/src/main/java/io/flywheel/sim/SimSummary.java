package io.flywheel.sim;

import java.nio.file.Path;

/**
 * The end record of a fleet simulation.
 *
 * @param outDir the fleet folder
 * @param groundTruth path of ground_truth.json
 * @param episodes episodes (files) written
 * @param robots robots
 * @param messages messages written, all files
 * @param cameraFrames camera frames written (JPEG), all cameras and files
 * @param bytes bytes of the MCAP files
 * @param simulatedSeconds total episode duration, seconds
 * @param wallSeconds wall-clock time of the run, seconds
 * @param framesPerSecond camera frames written per wall-clock second
 * @param realTimeFactor simulated seconds per wall-clock second
 * @param jpegEncoder the encoder used ("opencv" or "imageio")
 * @param threads worker threads
 */
public record SimSummary(Path outDir, Path groundTruth, int episodes, int robots, long messages,
                         long cameraFrames, long bytes, double simulatedSeconds, double wallSeconds,
                         double framesPerSecond, double realTimeFactor, String jpegEncoder, int threads) {}
