package io.flywheel.lake;

/**
 * One Lance data file of a fragment, as the table's manifest lists it (Lance table format,
 * "DataFile" in {@code table.proto}).
 *
 * @param path path relative to the table's {@code data/} folder, e.g. {@code 3f1c...e2.lance}
 * @param fragmentId id of the fragment the file belongs to
 * @param fields Lance field ids stored in the file (see {@link LakeTable#fieldIds(String)})
 * @param columnIndices for each entry of {@code fields}, the column of the file holding it, or -1
 *     for a field with no column of its own (a struct or list parent in file format 2.1)
 * @param sizeBytes file size in bytes when the manifest records it, else -1
 * @param majorVersion Lance file format major version (2 = v2.x)
 * @param minorVersion Lance file format minor version
 */
public record DataFileRef(String path, int fragmentId, int[] fields, int[] columnIndices, long sizeBytes,
        int majorVersion, int minorVersion) {
    /** @return the column of the file holding field {@code id}, or -1 when the file has none for it */
    public int columnOf(int id) {
        for (int i = 0; i < fields.length; i++) {
            if (fields[i] == id) {
                return i < columnIndices.length ? columnIndices[i] : -1;
            }
        }
        return -1;
    }
}
