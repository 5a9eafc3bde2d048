package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The launcher's per-run scratch folders ({@code java.io.tmpdir} and {@code flywheel.scratch} of one run). A run
 * removes its own folder when it ends; a killed one ({@code kill -9}) cannot, so every run removes, when it starts,
 * the folders beside its own whose run is gone.
 *
 * <p>A folder is named after the process that owns it, {@code flywheel.<owner>.<random>}, where the owner is
 * {@code <pid>-<start>-<pidns>} on Linux: the process id, its start time in clock ticks after boot (field 22 of
 * {@code /proc/<pid>/stat}) and its PID namespace ({@code /proc/<pid>/ns/pid}), and just {@code <pid>} where there
 * is no {@code /proc}. The launcher names it for its own shell process, which {@code exec} turns into the JVM.
 *
 * <p>The owner is gone when no process has that id, or the process that has it now started at another time (the id
 * was reused), or it is a zombie. A folder whose owner is in another PID namespace (a container sharing the folder)
 * cannot be judged and is kept, and so is any folder not named this way (such as those of older launchers,
 * {@code flywheel.XXXXXX}): a live run's folder is never removed.
 */
final class ScratchFolders {

    /** {@code flywheel.<pid>[-<start>-<pidns>].<random>}: group 1 pid, 2 start ticks, 3 PID namespace. */
    static final Pattern NAME = Pattern.compile("flywheel\\.(\\d+)(?:-(\\d+)-(\\d+))?\\.[A-Za-z0-9]+");

    private ScratchFolders() {
    }

    /**
     * @param pid a process id
     * @return the owner part of a scratch folder name for that process, as the launcher writes it:
     *         {@code <pid>-<start>-<pidns>}, or {@code <pid>} where {@code /proc} does not tell the rest
     */
    static String owner(long pid) {
        Optional<Proc> p = Proc.read(pid);
        Optional<String> ns = namespace(Path.of("/proc", Long.toString(pid), "ns", "pid"));
        return p.isPresent() && ns.isPresent() ? pid + "-" + p.get().startTicks() + "-" + ns.get() : Long.toString(pid);
    }

    /**
     * Removes the scratch folders in {@code parent} whose run is gone (see the class comment). Folders another
     * process removes at the same time, and those this user may not remove, are skipped.
     *
     * @param parent the folder that holds the scratch folders, e.g. {@code /tmp}
     * @param own    this run's scratch folder, never removed
     * @return the folders removed
     */
    static List<Path> removeStale(Path parent, Path own) {
        List<Path> removed = new ArrayList<>();
        Optional<String> ourNamespace = namespace(Path.of("/proc/self/ns/pid"));
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(parent, "flywheel.*")) {
            for (Path dir : dirs) {
                Matcher m = NAME.matcher(dir.getFileName().toString());
                if (!m.matches() || dir.equals(own) || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                if (m.group(3) != null && !ourNamespace.equals(Optional.of(m.group(3)))) {
                    continue; // another PID namespace: its process ids mean nothing here
                }
                if (isGone(Long.parseLong(m.group(1)), m.group(2)) && delete(dir)) {
                    removed.add(dir);
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: an unreadable parent leaves its folders as they are
        }
        return removed;
    }

    /**
     * @param pid        the owner's process id
     * @param startTicks the owner's start time as named in the folder, or null when the name has none
     * @return the owner process is gone: no such process, a process started at another time, or a zombie
     */
    static boolean isGone(long pid, String startTicks) {
        if (startTicks == null || !Files.isDirectory(Path.of("/proc/self"))) {
            return ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true);
        }
        if (!Files.exists(Path.of("/proc", Long.toString(pid)), LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        Optional<Proc> p = Proc.read(pid); // empty: it ended just now, or cannot be read; kept until the next start
        return p.isPresent() && (!Long.toString(p.get().startTicks()).equals(startTicks) || p.get().zombie());
    }

    /**
     * Deletes a folder and everything in it, not following links; files that vanish meanwhile are fine.
     *
     * @return the folder is gone
     */
    static boolean delete(Path dir) {
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw e;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    if (e != null && !(e instanceof NoSuchFileException)) {
                        throw e;
                    }
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
            return true;
        } catch (NoSuchFileException gone) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the number in a namespace link such as {@code pid:[4026531836]} */
    private static Optional<String> namespace(Path link) {
        try {
            String s = Files.readSymbolicLink(link).toString().replaceAll("[^0-9]", "");
            return s.isEmpty() ? Optional.empty() : Optional.of(s);
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return Optional.empty();
        }
    }

    /** What {@code /proc/<pid>/stat} says of a process: its start time in clock ticks after boot, and whether it is a zombie. */
    private record Proc(long startTicks, boolean zombie) {
        static Optional<Proc> read(long pid) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                // pid (comm) state ppid ...: comm may hold spaces and parentheses, the fields after the last ')' do not
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                char state = f[0].charAt(0);
                return Optional.of(new Proc(Long.parseLong(f[19]), state == 'Z' || state == 'X'));
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        }
    }
}
