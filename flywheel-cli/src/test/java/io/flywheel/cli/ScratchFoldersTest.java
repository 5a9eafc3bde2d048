package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scratch folders of killed runs are removed by the next start, those of live runs never: with real JVM processes
 * whose scratch folders the launcher's own lines name ({@code flywheel} in the repository root, from
 * {@code OWNER=$$} to {@code SCRATCH=...}), killed with {@link Process#destroyForcibly()} (SIGKILL, like
 * {@code kill -9}), and {@link Main} as the next start.
 */
class ScratchFoldersTest {

    @BeforeAll
    static void linux() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc (Linux)");
        assumeTrue(Files.isExecutable(Path.of("/bin/bash")), "needs bash, as the launcher does");
    }

    /** The folder the launcher makes is named after the JVM it execs: same PID, start time and PID namespace. */
    @Test
    void theLauncherNamesTheFolderAfterTheJvmItExecs(@TempDir Path tmp) throws Exception {
        Child c = Child.start(tmp, "io.flywheel.cli.ScratchFoldersTest$Sleeper");
        try {
            String name = c.scratch().getFileName().toString();
            Matcher m = ScratchFolders.NAME.matcher(name);
            assertTrue(m.matches(), name);
            assertTrue(m.group(2) != null && m.group(3) != null, "pid, start time and PID namespace: " + name);
            assertEquals("flywheel." + ScratchFolders.owner(c.process().pid()), name.substring(0, name.lastIndexOf('.')));
            assertEquals(c.scratch(), Path.of(c.ready().substring("ready ".length())), "java.io.tmpdir is the folder");
            assertFalse(ScratchFolders.isGone(c.process().pid(), m.group(2)));
        } finally {
            c.end();
        }
    }

    /**
     * Two runs live, one is killed with SIGKILL; then two runs start at once ({@code flywheel --version}): the
     * killed run's folder and the file in it are gone, the live run's folder and its file are kept, and each of
     * the two runs removes its own folder when it exits.
     */
    @Test
    void theNextStartRemovesAKilledRunsFolderAndKeepsALiveOnes(@TempDir Path tmp) throws Exception {
        Child killed = Child.start(tmp, "io.flywheel.cli.ScratchFoldersTest$Sleeper");
        Child live = Child.start(tmp, "io.flywheel.cli.ScratchFoldersTest$Sleeper");
        try {
            killed.ready();
            live.ready();
            Path killedFile = killed.scratch().resolve("work.bin");
            Path liveFile = live.scratch().resolve("work.bin");
            assertTrue(Files.isRegularFile(killedFile) && Files.isRegularFile(liveFile));
            killed.process().destroyForcibly();
            killed.process().waitFor();
            assertTrue(Files.isRegularFile(killedFile), "a kill -9 leaves the folder behind");

            Child next1 = Child.start(tmp, "io.flywheel.cli.Main", "--version");
            Child next2 = Child.start(tmp, "io.flywheel.cli.Main", "--version");
            String out1 = next1.output();
            String out2 = next2.output();
            assertEquals(0, next1.process().waitFor(), out1);
            assertEquals(0, next2.process().waitFor(), out2);
            assertTrue(out1.contains("flywheel 0.1.0"), out1);

            assertFalse(Files.exists(killed.scratch()), "the killed run's folder is removed");
            assertTrue(Files.isRegularFile(liveFile), "the live run's folder is kept");
            assertFalse(Files.exists(next1.scratch()), "a run removes its own folder when it exits");
            assertFalse(Files.exists(next2.scratch()));
            assertTrue(live.process().isAlive());
        } finally {
            killed.end();
            live.end();
        }
    }

    /**
     * Names are judged as the class comment says: a folder whose PID now belongs to a process started at another
     * time is removed; one from another PID namespace, one of the older launchers ({@code flywheel.XXXXXX}), a
     * plain file and this run's own folder are kept.
     */
    @Test
    void reusedPidsAreGoneOtherNamespacesAndOldNamesAreKept(@TempDir Path tmp) throws IOException {
        long self = ProcessHandle.current().pid();
        String[] owner = ScratchFolders.owner(self).split("-");
        assertEquals(3, owner.length, ScratchFolders.owner(self));
        Path own = Files.createDirectory(tmp.resolve("flywheel." + ScratchFolders.owner(self) + ".Own123"));
        Path reused = Files.createDirectory(tmp.resolve("flywheel." + self + "-" + (Long.parseLong(owner[1]) + 1) + "-"
                + owner[2] + ".Reu123"));
        Files.writeString(reused.resolve("liblance_jni123.so"), "x");
        Path otherNamespace = Files.createDirectory(tmp.resolve("flywheel.999999999-1-1.Oth123"));
        Path older = Files.createDirectory(tmp.resolve("flywheel.Old123"));
        Path file = Files.writeString(tmp.resolve("flywheel.999999999-1-" + owner[2] + ".Fil123"), "x");
        Path sameNamespaceGone = Files.createDirectory(tmp.resolve("flywheel.999999999-1-" + owner[2] + ".Gon123"));

        List<Path> removed = ScratchFolders.removeStale(tmp, own);

        assertEquals(List.of(reused, sameNamespaceGone).stream().sorted().toList(), removed.stream().sorted().toList());
        assertFalse(Files.exists(reused));
        assertFalse(Files.exists(sameNamespaceGone));
        assertTrue(Files.isDirectory(own) && Files.isDirectory(otherNamespace) && Files.isDirectory(older)
                && Files.isRegularFile(file));
    }

    /** A stand-in run: writes a file into its scratch folder, says {@code ready <java.io.tmpdir>}, waits for the end of its input. */
    public static final class Sleeper {
        public static void main(String[] args) throws IOException {
            Path scratch = Path.of(System.getProperty("java.io.tmpdir"));
            Files.write(scratch.resolve("work.bin"), new byte[4096]);
            System.out.println("ready " + scratch);
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the test closes our input
            }
        }
    }

    /**
     * A JVM started the way the launcher starts one: bash runs the launcher's scratch-folder lines with
     * {@code TMPDIR} set to the test's folder, then execs {@code java} with that folder as {@code java.io.tmpdir}
     * and {@code flywheel.scratch}.
     */
    record Child(Process process, Path scratch, BufferedReader out, StringBuilder seen) {

        static Child start(Path tmpdir, String mainClass, String... args) throws IOException {
            String launcher = Files.readString(Path.of(System.getenv().getOrDefault("FLYWHEEL_ROOT",
                    Path.of("").toAbsolutePath().getParent().toString()), "flywheel"));
            int from = launcher.indexOf("OWNER=$$");
            int scratchLine = launcher.indexOf("SCRATCH=\"$(mktemp", from);
            assertTrue(from >= 0 && scratchLine > from, "the launcher names its scratch folder from OWNER=$$ to SCRATCH=");
            String block = launcher.substring(from, launcher.indexOf('\n', scratchLine));
            List<String> cmd = new ArrayList<>(List.of("/bin/bash", "-c", block + "\necho \"$SCRATCH\"\n"
                    + "exec \"$0\" --add-opens=java.base/java.nio=ALL-UNNAMED -Djava.io.tmpdir=\"$SCRATCH\""
                    + " -Dflywheel.scratch=\"$SCRATCH\" -cp \"$1\" \"${@:2}\"",
                    ProcessHandle.current().info().command().orElse("java"), System.getProperty("java.class.path"),
                    mainClass));
            cmd.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("TMPDIR", tmpdir.toString());
            Process p = pb.start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertTrue(first != null && first.startsWith(tmpdir + "/flywheel."), "scratch folder: " + first);
            return new Child(p, Path.of(first), out, new StringBuilder());
        }

        /** @return the next line, which a {@link Sleeper} writes once its folder holds its file */
        String ready() throws IOException {
            String line = out.readLine();
            assertTrue(line != null && line.startsWith("ready "), "expected ready, got " + line);
            return line;
        }

        /** @return everything it writes, once it has ended */
        String output() throws IOException {
            for (String line; (line = out.readLine()) != null; ) {
                seen.append(line).append('\n');
            }
            return seen.toString();
        }

        void end() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor();
        }
    }
}
