package io.flywheel.serve.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The local cache: byte ranges of origin objects, stored path-mirrored on disk.
 *
 * <p>Layout under the cache folder: {@code objects/<key>/<start>-<end>.range} holds bytes
 * {@code [start, end)} of the object {@code key} (the key's slashes become folders, so the cache
 * reads like the lake: {@code objects/trainset_samples.lance/data/x.lance/0-4096.range}; raw files
 * are under {@code objects/raw/<absolute path>}), and {@code objects/<key>/size} its size in bytes
 * as decimal text. Path-mirrored rather than content-addressed because reads arrive by (key, range)
 * and the lake's data files are immutable once written (Lance never rewrites a data file: a new
 * version writes new files), so a key names fixed content.
 *
 * <p>Crash safety: every entry is written to a {@code .tmp-*} file in the same folder, forced to
 * disk and renamed over its final name with an atomic move, so an entry is either absent or whole.
 * Opening a cache deletes leftover temporary files and ignores (and deletes) any entry whose length
 * disagrees with its name. Thread-safe.
 */
public final class RangeCache {
    private static final Pattern ENTRY = Pattern.compile("(\\d+)-(\\d+)\\.range");

    private final Path objects;
    private final Map<String, NavigableMap<Long, Long>> index = new ConcurrentHashMap<>();
    private final Map<String, Long> sizes = new ConcurrentHashMap<>();

    private RangeCache(Path dir) {
        this.objects = dir.resolve("objects");
    }

    /**
     * Opens the cache in {@code dir} and indexes its entries. A missing folder is an empty cache, created by the
     * first {@link #put} (so opening a cache for a plan that then fails leaves nothing behind).
     *
     * @param dir the cache folder
     * @return the cache
     * @throws IOException when the folder cannot be read
     */
    public static RangeCache open(Path dir) throws IOException {
        RangeCache c = new RangeCache(dir.toAbsolutePath().normalize());
        if (!Files.isDirectory(c.objects)) {
            return c;
        }
        try (Stream<Path> s = Files.walk(c.objects)) {
            for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
                String name = p.getFileName().toString();
                String key = c.objects.relativize(p.getParent()).toString().replace('\\', '/');
                if (name.startsWith(".tmp-")) {
                    Files.deleteIfExists(p); // a warm killed mid-write
                    continue;
                }
                if (name.equals("size")) {
                    try {
                        c.sizes.put(key, Long.parseLong(Files.readString(p).strip()));
                    } catch (NumberFormatException e) {
                        Files.deleteIfExists(p);
                    }
                    continue;
                }
                Matcher m = ENTRY.matcher(name);
                if (!m.matches()) {
                    continue;
                }
                long start = Long.parseLong(m.group(1));
                long end = Long.parseLong(m.group(2));
                if (end < start || Files.size(p) != end - start) {
                    Files.deleteIfExists(p);
                    continue;
                }
                c.index.computeIfAbsent(key, k -> new ConcurrentSkipListMap<>()).merge(start, end, Math::max);
            }
        }
        return c;
    }

    /** @return the folder holding the entries */
    public Path objectsDir() {
        return objects;
    }

    /**
     * Stores bytes {@code [start, start + bytes.length)} of {@code key} atomically (temporary file,
     * fsync, atomic rename).
     *
     * @throws IOException when the entry cannot be written; nothing partial stays visible
     */
    public void put(String key, long start, byte[] bytes) throws IOException {
        long end = start + bytes.length;
        Path dir = dir(key);
        Files.createDirectories(dir);
        writeAtomically(dir, start + "-" + end + ".range", bytes);
        index.computeIfAbsent(key, k -> new ConcurrentSkipListMap<>()).merge(start, end, Math::max);
    }

    /** Records the size of {@code key}, atomically. */
    public void putSize(String key, long size) throws IOException {
        Path dir = dir(key);
        Files.createDirectories(dir);
        writeAtomically(dir, "size", Long.toString(size).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        sizes.put(key, size);
    }

    /** @return the recorded size of {@code key}, or -1 */
    public long size(String key) {
        return sizes.getOrDefault(key, -1L);
    }

    /**
     * @return whether the whole range is held (by one entry or by adjacent entries)
     */
    public boolean covers(String key, ByteRange r) {
        NavigableMap<Long, Long> m = index.get(key);
        if (m == null) {
            return r.length() == 0;
        }
        long at = r.start();
        while (at < r.end()) {
            Map.Entry<Long, Long> e = m.floorEntry(at);
            if (e == null || e.getValue() <= at) {
                return false;
            }
            at = e.getValue();
        }
        return true;
    }

    /**
     * @return bytes {@code r} of {@code key} from the cache, or null when some of them are not held
     * @throws IOException when an entry cannot be read
     */
    public byte[] get(String key, ByteRange r) throws IOException {
        if (!covers(key, r)) {
            return null;
        }
        NavigableMap<Long, Long> m = index.get(key);
        byte[] out = new byte[Math.toIntExact(r.length())];
        long at = r.start();
        Path dir = dir(key);
        while (at < r.end()) {
            Map.Entry<Long, Long> e = m.floorEntry(at);
            long to = Math.min(e.getValue(), r.end());
            Path f = dir.resolve(e.getKey() + "-" + e.getValue() + ".range");
            try (FileChannel fc = FileChannel.open(f, StandardOpenOption.READ)) {
                ByteBuffer b = ByteBuffer.wrap(out, (int) (at - r.start()), (int) (to - at));
                long pos = at - e.getKey();
                while (b.hasRemaining()) {
                    int n = fc.read(b, pos);
                    if (n < 0) {
                        throw new IOException(f + ": cache entry ends early at byte " + pos);
                    }
                    pos += n;
                }
            }
            at = to;
        }
        return out;
    }

    /** @return the entries held for {@code key}, as ranges in ascending order (merged) */
    public List<ByteRange> ranges(String key) {
        NavigableMap<Long, Long> m = index.get(key);
        if (m == null) {
            return List.of();
        }
        return ByteRange.merge(m.entrySet().stream().map(e -> new ByteRange(e.getKey(), e.getValue())).toList(), 0);
    }

    /** @return total bytes held (entries counted once per key, overlaps merged) */
    public long bytes() {
        return index.keySet().stream().mapToLong(k -> ByteRange.total(ranges(k))).sum();
    }

    private Path dir(String key) {
        String k = key.startsWith("/") ? key.substring(1) : key;
        Path d = objects.resolve(k).normalize();
        if (!d.startsWith(objects) || k.isEmpty()) {
            throw new IllegalArgumentException("cache key '" + key + "' leaves the cache folder " + objects);
        }
        return d;
    }

    private static void writeAtomically(Path dir, String name, byte[] bytes) throws IOException {
        Path tmp = Files.createTempFile(dir, ".tmp-", ".part");
        try {
            try (FileChannel fc = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    fc.write(b);
                }
                fc.force(true);
            }
            try {
                Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("cache folder " + dir + " does not support atomic renames", e);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
