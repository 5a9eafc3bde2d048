package io.flywheel.ingest;

/**
 * One raw file of a recording; never moved or rewritten.
 *
 * @param uri absolute {@code file:} URI of the file
 * @param sha256 SHA-256 of the whole file, 64 lowercase hex digits (the content hash ingest is idempotent on)
 * @param bytes file size in bytes
 */
public record SourceFile(String uri, String sha256, long bytes) {
    public SourceFile {
        if (uri == null || sha256 == null || sha256.length() != 64 || bytes < 0) {
            throw new IllegalArgumentException("bad source file: " + uri + " " + sha256 + " " + bytes);
        }
    }
}
