package io.flywheel.plot;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import javax.imageio.ImageIO;

/** Writes the pictures the commands draw (timelines, charts, embedding maps, contact sheets) as PNG files. */
public final class Png {
    private Png() {}

    /**
     * Writes {@code image} to {@code file} as PNG: encoded into a temporary file in the same folder, then moved over
     * {@code file}, so that a reader never sees half a picture and a failed write leaves an older file as it was.
     * Creates the folder when missing.
     *
     * @param image the picture
     * @param file the target, e.g. {@code map.png}; not a folder
     * @throws IOException when {@code file} is a folder (naming it), or its folder cannot be created or written (the
     *     {@link java.nio.file.FileSystemException} names the path)
     */
    public static void write(BufferedImage image, Path file) throws IOException {
        Path target = file.toAbsolutePath();
        if (Files.isDirectory(target)) {
            throw new IOException(file + " is a folder; give a file name for the picture, e.g. " + file.resolve("picture.png"));
        }
        Path parent = target.getParent();
        Path tmp;
        try {
            Files.createDirectories(parent);
            // not Files.createTempFile, which makes the file 0600: the picture gets the permissions of any new file
            // (0666 less the umask), as the HTML beside it does
            tmp = parent.resolve("." + target.getFileName() + "." + Long.toUnsignedString(
                    java.util.concurrent.ThreadLocalRandom.current().nextLong(), 36) + ".tmp");
            Files.newOutputStream(tmp, java.nio.file.StandardOpenOption.CREATE_NEW).close();
        } catch (FileSystemException e) { // name the picture asked for, not the temporary file
            throw e instanceof AccessDeniedException ? new AccessDeniedException(file.toString())
                    : e instanceof NoSuchFileException ? new NoSuchFileException(file.toString())
                    : new FileSystemException(file.toString(), null, e.getReason() != null ? e.getReason() : "cannot write here");
        }
        try {
            try (OutputStream out = Files.newOutputStream(tmp, java.nio.file.StandardOpenOption.TRUNCATE_EXISTING)) {
                if (!ImageIO.write(image, "png", out)) {
                    throw new IOException("no PNG writer available for " + file);
                }
            }
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
