package io.flywheel.plot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PngTest {
    @Test
    void writesIntoNewFoldersReplacesOldFilesAndRefusesAFolder(@TempDir Path tmp) throws IOException {
        BufferedImage img = new BufferedImage(7, 3, BufferedImage.TYPE_INT_RGB);
        img.setRGB(6, 2, 0x00ff8000);
        Path file = tmp.resolve("a/b/chart.png");
        Png.write(img, file);
        BufferedImage back = ImageIO.read(file.toFile());
        assertEquals(7, back.getWidth());
        assertEquals(3, back.getHeight());
        assertEquals(0xff8000, back.getRGB(6, 2) & 0xffffff);
        // the same permissions as any new file here (0666 less the umask; a temporary file would be 0600)
        Path plain = Files.writeString(tmp.resolve("a/b/plain.html"), "<p>");
        assertEquals(Files.getPosixFilePermissions(plain), Files.getPosixFilePermissions(file));
        Files.delete(plain);

        Png.write(new BufferedImage(2, 2, BufferedImage.TYPE_INT_RGB), file); // replaces
        assertEquals(2, ImageIO.read(file.toFile()).getWidth());
        try (Stream<Path> s = Files.list(file.getParent())) {
            assertEquals(1, s.count(), "no temporary file left beside the picture");
        }

        Path folder = Files.createDirectories(tmp.resolve("maps"));
        IOException e = assertThrows(IOException.class, () -> Png.write(img, folder));
        assertTrue(e.getMessage().contains(folder + " is a folder"), e.getMessage());
        assertTrue(Files.isDirectory(folder), "the folder is left as it was");
        try (Stream<Path> s = Files.list(folder)) {
            assertEquals(0, s.count());
        }
        Path notAFolder = Files.writeString(tmp.resolve("notes.txt"), "x");
        assertThrows(IOException.class, () -> Png.write(img, notAFolder.resolve("x.png")));
        assertEquals("x", Files.readString(notAFolder));
        Path proc = Path.of("/proc/flywheel-png-test.png"); // no file can be created in /proc, not even by root
        if (Files.isDirectory(proc.getParent())) {
            java.nio.file.FileSystemException e2 = assertThrows(java.nio.file.FileSystemException.class,
                    () -> Png.write(img, proc));
            assertEquals(proc.toString(), e2.getFile(), "the picture's path, not a temporary file");
        }
    }
}
