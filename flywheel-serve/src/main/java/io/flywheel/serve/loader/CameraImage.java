package io.flywheel.serve.loader;

import io.flywheel.enrich.RgbImage;

/**
 * A camera image of a sample.
 *
 * @param topic camera topic
 * @param source {@code hot} (the enrich hot copy, JPEG at training resolution) or {@code raw} (the
 *     original message payload read through its raw-file locator)
 * @param format {@code jpeg}, {@code png} or a raw pixel encoding such as {@code rgb8}
 * @param bytes the encoded image (or raw pixels), never null
 * @param decoded the decoded image when the loader decodes, else null
 */
public record CameraImage(String topic, String source, String format, byte[] bytes, RgbImage decoded) {
}
