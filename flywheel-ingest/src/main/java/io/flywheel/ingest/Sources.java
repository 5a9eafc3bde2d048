package io.flywheel.ingest;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.YAMLException;

import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;

/**
 * Format detection and content hashes.
 *
 * <p>Detection by content, not by name: the MCAP magic {@code 89 4D 43 41 50 30 0D 0A} (MCAP spec,
 * "Magic"), the ROS 1 bag line {@code #ROSBAG V2.0}, a TFRecord whose first record's length CRC is right
 * ({@link TfRecordReader}), the SQLite magic {@code "SQLite format 3\0"} (a rosbag2 sqlite3 {@code .db3}: the
 * recording is the bag whose metadata.yaml beside it lists the file, see {@link Rosbag2SqliteBag#locate}), a
 * LeRobotDataset folder (one with {@code meta/info.json}, {@link LeRobotSource}), or a
 * rosbag2 folder: one with {@code metadata.yaml} (its {@code relative_file_paths} give the files and their order;
 * {@code storage_identifier} mcap or sqlite3), or, without it, MCAP files named
 * {@code <stem>_0.mcap, <stem>_1.mcap, ...} whose log times continue (each file starts no earlier than the
 * previous one ends, and at most {@link #MAX_SPLIT_GAP_NS} later).
 */
public final class Sources {
    /** Largest gap between split files of one recording: 60 s. */
    public static final long MAX_SPLIT_GAP_NS = 60_000_000_000L;
    private static final byte[] MCAP_MAGIC = {(byte) 0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};
    private static final Pattern SPLIT = Pattern.compile("(.+)_(\\d+)\\.mcap");

    private Sources() {}

    /**
     * One recording's files, as detected.
     *
     * @param format the container format
     * @param root the path given (file or folder)
     * @param files the raw files in recording order
     */
    public record Source(SourceFormat format, Path root, List<Path> files) {
        public Source {
            files = List.copyOf(files);
        }
    }

    /**
     * Detects the format of one recording.
     *
     * @param path a file (MCAP, ROS 1 bag, TFRecord) or a rosbag2 folder
     * @return the source
     * @throws IngestException naming the file and what its first bytes are when the format is not recognised,
     *     when a metadata.yaml is broken or names missing files, or when a folder holds several recordings
     *     (use {@link #scan})
     * @throws IOException when reading fails
     */
    public static Source detect(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            Source lerobot = lerobot(path);
            if (lerobot != null) return lerobot;
            Path meta = path.resolve("metadata.yaml");
            if (Files.isRegularFile(meta)) return rosbag2FromMetadata(path, meta);
            List<Source> found = scan(path);
            if (found.size() == 1) return found.get(0);
            throw new IngestException(path.toString(), -1, "folder holds " + found.size()
                    + " recordings and no metadata.yaml; expected one rosbag2 recording (use Sources.scan for many)");
        }
        SourceFormat format = formatOf(path);
        if (format == SourceFormat.ROSBAG2_SQLITE3) return Rosbag2SqliteBag.locate(path); // the bag it belongs to
        return new Source(format, path, List.of(path));
    }

    /**
     * Finds every recording in a folder (not recursive): a rosbag2 folder is one recording; otherwise split
     * MCAP sets are grouped and every other recognised file is its own recording. Unrecognised files are
     * skipped.
     *
     * @param folder the folder
     * @return the recordings, by file name
     * @throws IOException when reading fails or a metadata.yaml is broken
     */
    public static List<Source> scan(Path folder) throws IOException {
        return scan(folder, (file, error) -> { });
    }

    /**
     * Like {@link #scan(Path)}, but a file whose name says it is a recording ({@link #hasRecordingName}) and that
     * cannot be read as one (empty, not a recording, unreadable) is given to {@code unreadable} instead of being
     * skipped silently; other unrecognised files (README, LICENSE, JSON ...) are still skipped.
     *
     * @param folder the folder
     * @param unreadable called with each such file and the error that names it and what was found
     * @return the recordings, by file name
     * @throws IOException when listing fails or a metadata.yaml is broken
     */
    public static List<Source> scan(Path folder, java.util.function.BiConsumer<Path, IOException> unreadable)
            throws IOException {
        if (!Files.isDirectory(folder)) return List.of(detect(folder));
        Source lerobot = lerobot(folder);
        if (lerobot != null) return List.of(lerobot);
        Path meta = folder.resolve("metadata.yaml");
        if (Files.isRegularFile(meta)) return List.of(rosbag2FromMetadata(folder, meta));
        List<Path> files;
        try (Stream<Path> s = Files.list(folder)) {
            files = s.filter(Files::isRegularFile).sorted(Comparator.comparing(p -> p.getFileName().toString())).toList();
        }
        Map<String, TreeMap<Integer, Path>> splits = new LinkedHashMap<>();
        List<Source> out = new ArrayList<>();
        for (Path f : files) {
            SourceFormat fmt;
            try {
                fmt = formatOf(f);
            } catch (IOException e) {
                if (hasRecordingName(f)) {
                    unreadable.accept(f, e); // named as a recording: the user expects it ingested
                } else if (!(e instanceof IngestException)) {
                    throw e;
                }
                continue; // not a recording (README, LICENSE, JSON ...)
            }
            Matcher m = SPLIT.matcher(f.getFileName().toString());
            // rosbag2 names split files <bag>_<N>.mcap inside a folder named <bag>
            if (fmt == SourceFormat.MCAP && m.matches() && m.group(1).equals(String.valueOf(folder.getFileName()))) {
                splits.computeIfAbsent(m.group(1), k -> new TreeMap<>()).put(Integer.parseInt(m.group(2)), f);
            } else {
                out.add(new Source(fmt, f, List.of(f)));
            }
        }
        for (TreeMap<Integer, Path> group : splits.values()) {
            out.addAll(splitGroups(group));
        }
        out.sort(Comparator.comparing(s -> s.files().get(0).getFileName().toString()));
        return out;
    }

    /**
     * @param file a file
     * @return whether its name is one recordings have: {@code .mcap}, {@code .bag} (ROS 1), {@code .db3} (rosbag2
     *     SQLite), or a TFRecord ({@code .tfrecord}, also {@code NAME.tfrecord-00000-of-00016})
     */
    public static boolean hasRecordingName(Path file) {
        String n = file.getFileName() == null ? "" : file.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        return n.endsWith(".mcap") || n.endsWith(".bag") || n.endsWith(".db3") || n.contains(".tfrecord");
    }

    /** Splits numbered files into runs of consecutive numbers whose times continue. */
    private static List<Source> splitGroups(TreeMap<Integer, Path> group) throws IOException {
        List<Source> out = new ArrayList<>();
        List<Path> run = new ArrayList<>();
        int prevN = -2;
        long prevEnd = 0;
        for (Map.Entry<Integer, Path> e : group.entrySet()) {
            long[] span = logTimeSpan(e.getValue());
            boolean continues = !run.isEmpty() && e.getKey() == prevN + 1 && span[0] >= prevEnd
                    && span[0] - prevEnd <= MAX_SPLIT_GAP_NS;
            if (!continues && !run.isEmpty()) {
                out.add(runSource(run));
                run = new ArrayList<>();
            }
            run.add(e.getValue());
            prevN = e.getKey();
            prevEnd = span[1];
        }
        if (!run.isEmpty()) out.add(runSource(run));
        return out;
    }

    private static Source runSource(List<Path> run) {
        return run.size() == 1 ? new Source(SourceFormat.MCAP, run.get(0), run)
                : new Source(SourceFormat.ROSBAG2, run.get(0).getParent(), run);
    }

    /**
     * @return {first, last} log time of an MCAP file's messages, ns, from its chunk records' message
     *     start/end times and any messages outside chunks (chunks are not decompressed)
     */
    static long[] logTimeSpan(Path mcap) throws IOException {
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
        McapStreamReader.Options o = McapStreamReader.Options.builder().emitChunks(true).validateCrcs(false).build();
        try (McapStreamReader r = McapStreamReader.open(mcap, o)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Chunk c) {
                    lo = Math.min(lo, c.messageStartTime());
                    hi = Math.max(hi, c.messageEndTime());
                } else if (rec instanceof Record.Message m) {
                    lo = Math.min(lo, m.logTime());
                    hi = Math.max(hi, m.logTime());
                }
            }
        }
        return lo == Long.MAX_VALUE ? new long[] {0, 0} : new long[] {lo, hi};
    }

    /**
     * @return the LeRobot dataset a folder holds (every file under meta/, data/ and videos/), or null when it is none
     * @throws IngestException when the folder has meta/ and data/ but no meta/info.json
     */
    private static Source lerobot(Path folder) throws IOException {
        if (LeRobotSource.isDataset(folder)) {
            return new Source(SourceFormat.LEROBOT, folder, LeRobotSource.files(folder));
        }
        if (LeRobotSource.lacksInfo(folder)) {
            throw new IngestException(folder.resolve("meta").resolve("info.json").toString(), -1, "missing: the folder"
                    + " has meta/ and data/ like a LeRobot dataset, which needs meta/info.json (codebase_version, fps,"
                    + " features, data_path)");
        }
        return null;
    }

    private static Source rosbag2FromMetadata(Path folder, Path meta) throws IOException {
        Object root;
        try (InputStream in = Files.newInputStream(meta)) {
            LoaderOptions lo = new LoaderOptions();
            lo.setCodePointLimit(16 << 20);
            root = new Yaml(lo).load(in);
        } catch (org.yaml.snakeyaml.error.MarkedYAMLException e) { // one line: where, and what was expected there
            int line = e.getProblemMark() == null ? 0 : e.getProblemMark().getLine() + 1;
            throw new IngestException(meta.toString(), -1, "line " + line + ": not valid YAML: " + e.getProblem());
        } catch (YAMLException e) {
            throw new IngestException(meta.toString(), -1, "not valid YAML: " + e.getMessage());
        }
        if (!(root instanceof Map<?, ?> m) || !(m.get("rosbag2_bagfile_information") instanceof Map<?, ?> info)) {
            throw new IngestException(meta.toString(), -1, "expected a rosbag2_bagfile_information mapping");
        }
        Object storage = info.get("storage_identifier");
        if ("sqlite3".equals(String.valueOf(storage))) return Rosbag2SqliteBag.locate(folder);
        if (storage != null && !"mcap".equals(String.valueOf(storage))) {
            throw new IngestException(meta.toString(), -1, "storage_identifier is '" + storage
                    + "'; expected mcap or sqlite3");
        }
        List<Path> files = new ArrayList<>();
        if (info.get("relative_file_paths") instanceof List<?> rel) {
            for (Object o : rel) files.add(folder.resolve(String.valueOf(o)));
        } else if (info.get("files") instanceof List<?> fl) {
            for (Object o : fl) if (o instanceof Map<?, ?> fm && fm.get("path") != null) files.add(folder.resolve(String.valueOf(fm.get("path"))));
        }
        if (files.isEmpty()) {
            throw new IngestException(meta.toString(), -1, "names no files (relative_file_paths or files[].path)");
        }
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                throw new IngestException(meta.toString(), -1, "names file " + folder.relativize(f) + ", which does not exist");
            }
            SourceFormat fmt = formatOf(f);
            if (fmt != SourceFormat.MCAP) {
                throw new IngestException(f.toString(), 0, "listed in metadata.yaml but is " + fmt + ", expected MCAP");
            }
        }
        return new Source(SourceFormat.ROSBAG2, folder, files);
    }

    /**
     * @param file a file
     * @return its format, from its first bytes
     * @throws IngestException naming the file and its first bytes when no format matches
     */
    public static SourceFormat formatOf(Path file) throws IOException {
        byte[] head = new byte[16];
        int n;
        try (InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(head, 0, head.length);
        }
        if (n >= 8 && startsWith(head, MCAP_MAGIC)) return SourceFormat.MCAP;
        if (n >= 13 && new String(head, 0, 13, StandardCharsets.ISO_8859_1).equals("#ROSBAG V2.0\n")) return SourceFormat.ROS1_BAG;
        if (TfRecordReader.looksLikeTfRecord(file)) return SourceFormat.RLDS_TFRECORD;
        if (n >= 16 && new String(head, 0, 16, StandardCharsets.ISO_8859_1).equals("SQLite format 3\0")) {
            return SourceFormat.ROSBAG2_SQLITE3;
        }
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < Math.min(n, 8); i++) hex.append(i == 0 ? "" : " ").append(String.format("%02X", head[i]));
        throw new IngestException(file.toString(), 0, "not a recording: expected the MCAP magic 89 4D 43 41 50 30 0D 0A,"
                + " the ROS 1 bag line '#ROSBAG V2.0', the SQLite magic of a rosbag2 .db3, or a TFRecord record header with a valid length CRC; found "
                + (n == 0 ? "an empty file" : hex.toString()));
    }

    private static boolean startsWith(byte[] b, byte[] p) {
        for (int i = 0; i < p.length; i++) if (b[i] != p[i]) return false;
        return true;
    }

    /**
     * SHA-256 of a file (FIPS 180-4), read through read-only memory maps of at most 64 MiB each (no copy
     * through a Java heap buffer: about twice as fast as streamed reads on page-cached files). The size is
     * taken when the file is opened.
     *
     * @param file the file
     * @return 64 lowercase hex digits
     * @throws IOException when reading fails
     */
    public static String sha256(Path file) throws IOException {
        MessageDigest md = sha256Digest();
        try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = fc.size();
            for (long at = 0; at < size; at += HASH_WINDOW) {
                md.update(fc.map(FileChannel.MapMode.READ_ONLY, at, Math.min(HASH_WINDOW, size - at)));
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** Bytes hashed per memory map. */
    private static final long HASH_WINDOW = 64L << 20;

    /** @return the source file entry (absolute URI, SHA-256, size) of a file */
    public static SourceFile sourceFile(Path file) throws IOException {
        return new SourceFile(file.toAbsolutePath().normalize().toUri().toString(), sha256(file), Files.size(file));
    }

    /**
     * @param raw where the file is read from and the URI recorded for it
     * @return the source file entry (the URI {@code raw} gives, SHA-256, size) of a file, read through {@code raw}
     *     when it is not on this machine (sequential reads of {@value #REMOTE_HASH_BLOCK} bytes)
     */
    public static SourceFile sourceFile(Path file, RawFiles raw) throws IOException {
        if (raw.isLocal(file)) {
            return new SourceFile(raw.uri(file), sha256(file), Files.size(file));
        }
        MessageDigest md = sha256Digest();
        long size;
        try (io.flywheel.raw.RawChannel ch = raw.open(file)) {
            size = ch.size();
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(REMOTE_HASH_BLOCK);
            for (long at = 0; at < size; at += b.limit()) {
                b.clear().limit((int) Math.min(REMOTE_HASH_BLOCK, size - at));
                ch.readFully(b, at, raw.name(file));
                b.flip();
                md.update(b);
            }
        }
        return new SourceFile(raw.uri(file), HexFormat.of().formatHex(md.digest()), size);
    }

    /** Bytes per read when hashing a file of a remote store. */
    private static final int REMOTE_HASH_BLOCK = 8 << 20;

    /**
     * @param files the files of a recording, in order
     * @return {@code rec-} + the first 16 hex digits of SHA-256 over the files' SHA-256 hex digests
     */
    public static String recordingId(List<SourceFile> files) {
        MessageDigest md = sha256Digest();
        for (SourceFile f : files) md.update(f.sha256().getBytes(StandardCharsets.US_ASCII));
        return "rec-" + HexFormat.of().formatHex(md.digest()).substring(0, 16);
    }

    private static MessageDigest sha256Digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
