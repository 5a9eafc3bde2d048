package io.flywheel.lake;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import io.flywheel.error.BadInputException;
import io.flywheel.error.StorageUnavailableException;

/**
 * The lake-init policy for a local folder: a lake keeps its tables in a folder of its own, so {@link Lake#init}
 * refuses a folder that holds other files (e.g. the recordings, when {@code init fleet/} was meant as
 * {@code init lake/}), naming a few of them. What does not count: hidden entries (names starting with {@code .}, such
 * as {@code .DS_Store} or {@code .git}), and the lake's own names (the commit points {@code _lake}, the config file
 * {@code flywheel.yaml}, and {@code <table>.lance} of every table a lake may hold, such as the tables a killed init
 * left behind, which init replaces).
 */
final class InitFolder {
    /** Most entry names an error message lists. */
    static final int NAMED = 3;

    private InitFolder() {}

    /**
     * @param dir a local folder (need not exist)
     * @throws BadInputException when it holds entries other than hidden ones and the lake's own, naming the folder,
     *     how many there are and the first {@value #NAMED} by name
     * @throws StorageUnavailableException when the folder cannot be listed
     */
    static void requireOwnFolder(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        List<String> others = new ArrayList<>(others(dir));
        if (!others.isEmpty()) {
            throw new BadInputException("cannot init lake at " + dir + ": the folder is not empty (" + others.size()
                    + " entr" + (others.size() == 1 ? "y" : "ies") + ", e.g. "
                    + String.join(", ", others.subList(0, Math.min(NAMED, others.size())))
                    + "); a lake needs a folder of its own: give a new or empty one");
        }
    }

    /** @return the names in {@code dir} that are neither hidden nor the lake's own, sorted */
    static Set<String> others(Path dir) {
        Set<String> own = new TreeSet<>(List.of(Lake.META, Lake.CONFIG_FILE, Lake.LEGACY_CATALOG + ".lance"));
        TableSchemas.KNOWN_TABLES.forEach(t -> own.add(t + ".lance"));
        Set<String> out = new TreeSet<>();
        try (Stream<Path> entries = Files.list(dir)) {
            entries.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(".") && !own.contains(n))
                    .forEach(out::add);
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        return out;
    }
}
