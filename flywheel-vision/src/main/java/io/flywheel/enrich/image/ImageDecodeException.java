package io.flywheel.enrich.image;

import java.io.IOException;

/**
 * Image bytes that cannot be decoded as their declared format. The message names the image (raw file and
 * position, or the caller's label), the format that was expected and what was found.
 */
public final class ImageDecodeException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * @param where the image: raw file and locator, or a label given by the caller
     * @param problem what was expected and what was found
     */
    public ImageDecodeException(String where, String problem) {
        super((where == null ? "<image>" : where) + ": " + problem);
    }
}
