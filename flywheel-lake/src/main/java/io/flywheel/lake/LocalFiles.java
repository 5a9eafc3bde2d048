package io.flywheel.lake;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Local file-system housekeeping shared by the stages (scratch folders, rewritten derived tables, exports). */
public final class LocalFiles {
    private LocalFiles() {}

    /**
     * @return what went wrong with a local file operation, in words and with the path it names (a
     *     {@code NoSuchFileException}'s message is only its path): e.g. "/proc/nope: no such file or folder"
     */
    public static String reason(IOException e) {
        if (e instanceof java.nio.file.FileSystemException f) {
            String what;
            if (f instanceof java.nio.file.NoSuchFileException) {
                what = "no such file or folder";
            } else if (f instanceof java.nio.file.AccessDeniedException) {
                what = "permission denied";
            } else if (f instanceof java.nio.file.NotDirectoryException) {
                what = "not a folder";
            } else if (f instanceof java.nio.file.FileAlreadyExistsException) {
                what = "already exists";
            } else if (f instanceof java.nio.file.DirectoryNotEmptyException) {
                what = "folder not empty";
            } else {
                what = f.getReason() == null ? "file system error" : f.getReason().toLowerCase(java.util.Locale.ROOT);
            }
            return (f.getFile() == null ? "" : f.getFile() + ": ") + what
                    + (f.getOtherFile() == null ? "" : " (" + f.getOtherFile() + ")");
        }
        return String.valueOf(e.getMessage());
    }

    /**
     * Deletes a file or a folder with everything below it, deepest first; nothing when it does not exist.
     *
     * @throws IOException naming the first path that could not be deleted
     */
    public static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(x);
            }
        }
    }
}
