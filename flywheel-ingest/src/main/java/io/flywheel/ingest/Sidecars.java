package io.flywheel.ingest;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Sidecar videos: MP4 files recorded next to a bag, one per camera, that ingest adds to the recording as cameras.
 *
 * <p>For a recording {@code NAME.mcap} or {@code NAME.bag} (the name without its last extension), every file
 * {@code NAME.<camera>.mp4} in the same folder, and every {@code <camera>.mp4} in a folder {@code NAME} beside it (the
 * layout recorders that write one folder per recording use; a camera name may hold dots); for a rosbag2 folder {@code NAME}, every {@code NAME.<camera>.mp4}
 * inside it or beside it. Each becomes the camera topic {@code /<camera>/video} (message type
 * {@value #MESSAGE_TYPE}) with one message per video sample, in presentation order (the order of the sample
 * table's presentation times, decode time + composition offset: a stream with B-frames stores them in decode order,
 * whose times go back and forth), whose raw locator is the sample's plain byte range of the MP4
 * ({@link Mp4SampleTable}; format {@code h264} / {@code h265}). Its log time is the sample's presentation time plus
 * the recording's start (the first log time of any message of the recording), unless a file
 * {@code NAME.<camera>.timestamps} lies beside the MP4: one integer nanosecond log time per line, one line per frame
 * in decode order (blank lines are skipped), which then gives each sample's time. A decoder still gets the samples
 * in decode order ({@link VideoUnits}). The MP4 and the
 * timestamps file are raw files of the recording (their SHA-256 is part of the recording id).
 */
public final class Sidecars {
    /** The message type of a sidecar camera stream. */
    public static final String MESSAGE_TYPE = "mp4/CompressedVideo";

    private Sidecars() {}

    /**
     * One sidecar video.
     *
     * @param camera the camera name ({@code <camera>} of the file name)
     * @param video the MP4 file
     * @param timestamps the {@code .timestamps} file, or null
     */
    public record Sidecar(String camera, Path video, Path timestamps) {
        /** @return the camera topic, {@code /<camera>/video} */
        public String topic() {
            return "/" + camera + "/video";
        }
    }

    /**
     * @param source a detected recording
     * @return its sidecar videos, by camera name; empty for RLDS
     * @throws IOException when a folder cannot be listed
     * @throws IngestException when a camera has a video in both layouts
     */
    public static List<Sidecar> find(Sources.Source source) throws IOException {
        List<Path> folders = new ArrayList<>();
        String name;
        Path nameFolder = null;
        switch (source.format()) {
            case MCAP, ROS1_BAG -> {
                Path f = source.files().get(0);
                String n = String.valueOf(f.getFileName());
                int dot = n.lastIndexOf('.');
                name = dot > 0 ? n.substring(0, dot) : n;
                folders.add(f.toAbsolutePath().getParent());
                nameFolder = f.toAbsolutePath().resolveSibling(name);
            }
            case ROSBAG2, ROSBAG2_SQLITE3 -> {
                Path root = source.root().toAbsolutePath();
                if (!Files.isDirectory(root)) { // a lone .db3: as a single file
                    String n = String.valueOf(root.getFileName());
                    int dot = n.lastIndexOf('.');
                    name = dot > 0 ? n.substring(0, dot) : n;
                    folders.add(root.getParent());
                    break;
                }
                name = String.valueOf(root.getFileName());
                folders.add(root);
                if (root.getParent() != null) folders.add(root.getParent());
            }
            default -> {
                return List.of();
            }
        }
        List<Sidecar> out = new ArrayList<>();
        String prefix = name + ".";
        for (Path folder : folders) {
            if (folder == null || !Files.isDirectory(folder)) continue;
            List<Path> mp4s;
            try (Stream<Path> s = Files.list(folder)) {
                mp4s = s.filter(p -> {
                    String n = String.valueOf(p.getFileName());
                    return n.startsWith(prefix) && n.endsWith(".mp4") && n.length() > prefix.length() + 4
                            && Files.isRegularFile(p);
                }).sorted(Comparator.comparing(p -> p.getFileName().toString())).toList();
            }
            for (Path v : mp4s) {
                String n = String.valueOf(v.getFileName());
                String camera = n.substring(prefix.length(), n.length() - 4);
                Path ts = v.resolveSibling(prefix + camera + ".timestamps");
                out.add(new Sidecar(camera, v, Files.isRegularFile(ts) ? ts : null));
            }
        }
        if (nameFolder != null && Files.isDirectory(nameFolder)) { // NAME/<camera>.mp4
            List<Path> mp4s;
            try (Stream<Path> s = Files.list(nameFolder)) {
                mp4s = s.filter(p -> String.valueOf(p.getFileName()).endsWith(".mp4")
                        && String.valueOf(p.getFileName()).length() > 4 && Files.isRegularFile(p))
                        .sorted(Comparator.comparing(p -> p.getFileName().toString())).toList();
            }
            for (Path v : mp4s) {
                String n = String.valueOf(v.getFileName());
                String camera = n.substring(0, n.length() - 4);
                if (out.stream().anyMatch(x -> x.camera().equals(camera))) {
                    throw new IngestException(v.toString(), -1, "camera '" + camera + "' has two sidecar videos: "
                            + v + " and " + out.stream().filter(x -> x.camera().equals(camera)).findFirst().orElseThrow()
                            .video() + "; keep one");
                }
                Path ts = v.resolveSibling(camera + ".timestamps");
                out.add(new Sidecar(camera, v, Files.isRegularFile(ts) ? ts : null));
            }
        }
        return out;
    }

    /**
     * Adds the sidecars as camera streams to a collector that has read the recording's messages.
     *
     * @param c the collector
     * @param sidecars the sidecars ({@link #find})
     * @param files the recording's raw files; the sidecars' files are appended
     * @throws IngestException naming the file and what was wrong when an MP4 is truncated or not H.264 / H.265,
     *     or a timestamps file holds a line that is no integer or a count that differs from the video's frames
     *     (naming the line)
     */
    static void add(Collector c, List<Sidecar> sidecars, List<SourceFile> files, RawFiles raw) throws IOException {
        if (sidecars.isEmpty()) return;
        long start = c.minLogTimeNs();
        if (start == Long.MAX_VALUE) start = 0;
        int id = 0;
        for (StreamBuilder s : c.streams.values()) id = Math.max(id, s.channelId + 1);
        for (Sidecar sc : sidecars) {
            Mp4SampleTable t = Mp4SampleTable.read(sc.video());
            long[] times = sc.timestamps() == null ? null : timestamps(sc.timestamps(), sc.video(), t.samples().size());
            String uri = raw.uri(sc.video());
            StreamBuilder sb = c.stream(sc.topic(), id++, MESSAGE_TYPE, StreamRole.CAMERA);
            for (Mp4SampleTable.Sample s : presentationOrder(t.samples())) {
                int i = sb.add(times == null ? start + s.presentationNs() : times[s.index()], 0);
                sb.locator(i, new RawLocator(uri, -1, s.offset(), s.size(), "", t.format(), 0, 0));
            }
            files.add(Sources.sourceFile(sc.video(), raw));
            if (sc.timestamps() != null) files.add(Sources.sourceFile(sc.timestamps(), raw));
        }
    }

    /**
     * @param decodeOrder samples in decode order
     * @return the same samples by presentation time; equal times keep decode order
     */
    static List<Mp4SampleTable.Sample> presentationOrder(List<Mp4SampleTable.Sample> decodeOrder) {
        List<Mp4SampleTable.Sample> out = new ArrayList<>(decodeOrder);
        out.sort(Comparator.comparingLong(Mp4SampleTable.Sample::presentationNs)); // List.sort is stable
        return out;
    }

    /** Reads one integer ns per non-blank line; exactly {@code count} of them. */
    static long[] timestamps(Path file, Path video, int count) throws IOException {
        long[] out = new long[count];
        int n = 0;
        int line = 0;
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String s;
            while ((s = r.readLine()) != null) {
                line++;
                String v = s.strip();
                if (v.isEmpty()) continue;
                if (n == count) {
                    throw new IngestException(file.toString(), -1, "line " + line + ": timestamp " + (n + 1)
                            + ", but " + video.getFileName() + " has only " + count + " video frames; expected one"
                            + " integer nanosecond log time per frame, in decode order");
                }
                try {
                    out[n++] = Long.parseLong(v);
                } catch (NumberFormatException e) {
                    throw new IngestException(file.toString(), -1, "line " + line + ": expected an integer nanosecond"
                            + " log time, found '" + (v.length() > 40 ? v.substring(0, 40) + "..." : v) + "'");
                }
            }
        } catch (java.nio.charset.MalformedInputException e) {
            throw new IngestException(file.toString(), -1, "line " + (line + 1) + ": not UTF-8 text");
        }
        if (n < count) {
            throw new IngestException(file.toString(), -1, "line " + (line + 1) + " (end of file): " + n
                    + " timestamps for the " + count + " video frames of " + video.getFileName()
                    + "; expected one integer nanosecond log time per frame, in decode order");
        }
        return out;
    }
}
