package io.flywheel.ingest;

/**
 * Bytes that were read from a raw file but are not what their format says: an MP4 video sample whose NAL unit
 * lengths (ISO/IEC 14496-15) do not add up to the sample, an image payload that is not valid base64 (RFC 4648) or
 * not a JSON message with a base64 string at its field path. Unlike its parent {@link IngestException} (a range
 * past the end of the file, a chunk that does not decompress), this concerns one image only: a caller that handles
 * images one by one (enrich) records it as that image's decode error and goes on. The message names the file, the
 * byte offset (and the sample where one is known) and what was expected.
 */
public class MalformedDataException extends IngestException {
    private static final long serialVersionUID = 1L;

    /**
     * @param file the file, may be null
     * @param offset byte offset of the malformed bytes (an MP4 sample's offset), -1 when unknown
     * @param problem what was expected and what was found
     */
    public MalformedDataException(String file, long offset, String problem) {
        super(file, offset, problem);
    }
}
