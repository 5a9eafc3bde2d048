package io.flywheel.lake;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import io.flywheel.error.StorageUnavailableException;

/**
 * {@link MetaStore} in a local folder. {@link #putIfAbsent} writes a temporary file, forces it to disk, then hard-links
 * it to the key ({@code link(2)} fails when the key exists), so the key appears with its whole content or not at all
 * and a process killed at any moment leaves at most a temporary file behind (ignored by {@link #list}).
 */
final class LocalMetaStore implements MetaStore {
    private static final String TMP = ".tmp-";
    private final Path root;

    LocalMetaStore(Path root) {
        this.root = root;
    }

    @Override
    public byte[] read(String key) {
        try {
            return Files.readAllBytes(root.resolve(key));
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot read " + describe(key) + ": " + LocalFiles.reason(e), e);
        }
    }

    @Override
    public boolean putIfAbsent(String key, byte[] content) {
        Path target = root.resolve(key);
        Path tmp = null;
        try {
            Files.createDirectories(target.getParent());
            if (Files.exists(target)) {
                return false;
            }
            tmp = writeTemporary(target, content);
            try {
                Files.createLink(target, tmp);
            } catch (FileAlreadyExistsException e) {
                return false;
            } catch (UnsupportedOperationException | java.nio.file.FileSystemException e) {
                // no hard links here (some network and FUSE file systems): a rename that refuses an existing
                // target; its check and rename are two steps, which the commit lock covers
                try {
                    Files.move(tmp, target);
                    tmp = null;
                } catch (FileAlreadyExistsException f) {
                    return false;
                }
            }
            syncFolder(target.getParent());
            return true;
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot write " + describe(key) + ": " + LocalFiles.reason(e), e);
        } finally {
            deleteQuietly(tmp);
        }
    }

    @Override
    public void put(String key, byte[] content) {
        Path target = root.resolve(key);
        Path tmp = null;
        try {
            Files.createDirectories(target.getParent());
            tmp = writeTemporary(target, content);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            tmp = null;
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot write " + describe(key) + ": " + LocalFiles.reason(e), e);
        } finally {
            deleteQuietly(tmp);
        }
    }

    @Override
    public void delete(String key) {
        try {
            Files.deleteIfExists(root.resolve(key));
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot delete " + describe(key) + ": " + LocalFiles.reason(e), e);
        }
    }

    @Override
    public List<String> list(String prefix, String startAfter) {
        Path dir = root.resolve(prefix.endsWith("/") ? prefix : prefix + "/");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(TMP)).forEach(n -> {
                String key = (prefix.endsWith("/") ? prefix : prefix + "/") + n;
                if (startAfter == null || key.compareTo(startAfter) > 0) {
                    out.add(key);
                }
            });
        } catch (IOException e) {
            throw new StorageUnavailableException("cannot list " + dir + ": " + LocalFiles.reason(e), e);
        }
        out.sort(null);
        return out;
    }

    @Override
    public String describe(String key) {
        return root.resolve(key).toString();
    }

    @Override
    public void close() {
        // nothing held
    }

    private static Path writeTemporary(Path target, byte[] content) throws IOException {
        Path tmp = target.resolveSibling(TMP + target.getFileName() + "-" + UUID.randomUUID());
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(content);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        return tmp;
    }

    private static void syncFolder(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // not every file system lets a folder be opened for sync; the link is durable once its file is
        }
    }

    private static void deleteQuietly(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                // a leftover temporary file is ignored by list() and read()
            }
        }
    }
}
