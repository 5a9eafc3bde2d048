package io.flywheel.error;

import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;

/** File system errors said in words, for the messages of every module. */
public final class FileErrors {
    private FileErrors() {}

    /**
     * @return a file system error in words, naming its file (and the other file, for a move or link): a
     *     {@code NoSuchFileException}'s own message is only its path
     */
    public static String words(FileSystemException f) {
        String file = f.getFile() + (f.getOtherFile() == null ? "" : " -> " + f.getOtherFile());
        if (f instanceof NoSuchFileException) {
            return "no such file or folder: " + file;
        }
        if (f instanceof AccessDeniedException) {
            return "permission denied: " + file;
        }
        if (f instanceof FileAlreadyExistsException) {
            return file + ": " + (Files.isRegularFile(Path.of(f.getFile())) ? "is a file; a folder is expected here"
                    : "already exists");
        }
        if (f instanceof NotDirectoryException) {
            return file + ": not a folder";
        }
        if (f instanceof DirectoryNotEmptyException) {
            return file + ": the folder is not empty";
        }
        if (f instanceof FileSystemLoopException) {
            return file + ": symbolic links in a loop";
        }
        if (f instanceof NotLinkException) {
            return file + ": not a symbolic link";
        }
        return file + ": " + (f.getReason() == null ? "file system error" : f.getReason());
    }
}
