package io.flywheel.serve.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** An {@link Origin} on a local folder (a local lake, or {@code /} for raw files by absolute path). */
public final class LocalOrigin implements Origin {
    private final Path root;

    /** @param root the folder keys are relative to */
    public LocalOrigin(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    @Override
    public String describe() {
        return root.toString();
    }

    /** @return the file of a key */
    public Path path(String key) {
        Path p = root.resolve(key.startsWith("/") ? key.substring(1) : key).normalize();
        if (!p.startsWith(root)) {
            throw new IllegalArgumentException("key '" + key + "' leaves the origin folder " + root);
        }
        return p;
    }

    @Override
    public long size(String key) throws IOException {
        return Files.size(path(key));
    }

    @Override
    public byte[] read(String key, ByteRange range) throws IOException {
        Path p = path(key);
        try (FileChannel fc = FileChannel.open(p, StandardOpenOption.READ)) {
            return readFully(fc, range, p.toString());
        }
    }

    static byte[] readFully(FileChannel fc, ByteRange range, String name) throws IOException {
        if (range.end() > fc.size()) {
            throw new IOException(name + ": range [" + range + ") runs past the end of the file at byte " + fc.size());
        }
        ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(range.length()));
        long at = range.start();
        while (b.hasRemaining()) {
            int n = fc.read(b, at);
            if (n < 0) {
                throw new IOException(name + ": file ends early at byte " + at + " (expected " + range.end() + ")");
            }
            at += n;
        }
        return b.array();
    }

    @Override
    public List<Entry> list(String prefix) throws IOException {
        String dirKey = prefix.contains("/") ? prefix.substring(0, prefix.lastIndexOf('/') + 1) : "";
        Path dir = path(dirKey);
        List<Entry> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
                String key = root.relativize(p).toString().replace('\\', '/');
                if (key.startsWith(prefix)) {
                    out.add(new Entry(key, Files.size(p)));
                }
            }
        }
        out.sort((a, b) -> a.key().compareTo(b.key()));
        return out;
    }
}
