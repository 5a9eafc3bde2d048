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
