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
     * @return what went wrong with a local file operation, in words and with the path it names
     *     ({@link io.flywheel.error.FileErrors#words}; a {@code NoSuchFileException}'s message is only its path)
     */
    public static String reason(IOException e) {
        return e instanceof java.nio.file.FileSystemException f && f.getFile() != null
                ? io.flywheel.error.FileErrors.words(f) : String.valueOf(e.getMessage());
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
