package io.flywheel.ingest;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads recordings of every supported format into the storage-free {@link Recording} model:
 * <ul>
 *   <li>MCAP (ROS 2 CDR, JSON, protobuf): one file = one recording with one episode;</li>
 *   <li>rosbag2 (a folder with metadata.yaml, or split files {@code stem_0.mcap, stem_1.mcap ...}): one
 *       recording of several files, one episode spanning them;</li>
 *   <li>rosbag2 in the sqlite3 storage (a folder with metadata.yaml and {@code .db3} files, or one of its
 *       {@code .db3} files): one recording of all the bag's files, one episode ({@link Rosbag2SqliteBag});</li>
 *   <li>ROS 1 bag: one recording, one episode;</li>
 *   <li>RLDS TFRecord: one recording per file, one episode per {@code tf.train.Example};</li>
 *   <li>LeRobotDataset v2.x / v3.0 folder: one recording of all its files, one episode per LeRobot episode
 *       ({@link LeRobotSource}).</li>
 * </ul>
 * MCAP, rosbag2 and ROS 1 recordings also get their sidecar MP4 videos ({@link Sidecars}) as cameras.
 * Roles come from the options' {@link RobotProfile}, or are detected; times follow the options'
 * {@link io.flywheel.align.TimestampRule}, with the log clock (wall or relative) decided once per episode over all
 * its streams. Stateless; safe to call from several threads on different inputs.
 */
public final class Ingest {
    private Ingest() {}

    /** Reads one recording with the default options. @see #read(Path, IngestOptions) */
    public static Recording read(Path path) throws IOException {
        return read(path, IngestOptions.defaults());
    }

    /**
     * Reads one recording.
     *
     * @param path a file, or a rosbag2 folder ({@link Sources#detect})
     * @param options profile, robot id, RLDS timing
     * @return the recording
     * @throws IngestException when the format is not recognised or the input is broken (names file, offset, what)
     * @throws io.flywheel.mcap.McapFormatException when an MCAP file breaks the spec
     * @throws io.flywheel.ros.bag.BagFormatException when a ROS 1 bag is broken
     * @throws IOException when reading fails
     */
    public static Recording read(Path path, IngestOptions options) throws IOException {
        return read(Sources.detect(path), options);
    }

    /**
     * Reads every recording of a folder ({@link Sources#scan}).
     *
     * @param folder the folder
     * @param options options
     * @return the recordings, by first file name
     */
    public static List<Recording> readAll(Path folder, IngestOptions options) throws IOException {
        List<Recording> out = new ArrayList<>();
        for (Sources.Source s : Sources.scan(folder)) out.add(read(s, options));
        return out;
    }

    /**
     * Reads a detected source.
     *
     * @param source files and format
     * @param options options
     * @return the recording
     */
    public static Recording read(Sources.Source source, IngestOptions options) throws IOException {
        RobotProfile profile = options.profile();
        String robotId = !options.robotId().isEmpty() ? options.robotId() : profile.robotId();
        Map<String, String> recMeta = new LinkedHashMap<>();
        RawFiles raw = options.rawFiles();
        recMeta.put("source.root", raw.isLocal(source.root()) && raw.uri(source.root()).startsWith("file:")
                ? source.root().toAbsolutePath().normalize().toString() : raw.uri(source.root()));
        recMeta.put("source.files", Integer.toString(source.files().size()));
        List<Episode> episodes = new ArrayList<>();
        List<SourceFile> files = new ArrayList<>();
        String recordingId;
        RobotProfile resolved;
        if (source.format() == SourceFormat.MCAP || source.format() == SourceFormat.ROSBAG2) {
            // one pass per file: the SHA-256 is computed from the bytes read for parsing
            Collector c = new Collector(profile);
            for (Path p : source.files()) files.add(McapSource.read(p, c, raw));
            Sidecars.add(c, Sidecars.find(source), files, raw);
            recordingId = Sources.recordingId(files);
            resolved = c.resolvedProfile();
            recMeta.putAll(c.recordingMetadata);
            episodes.add(c.episode(recordingId, 0, resolved, robotId, options.timestampRule()));
            checkMaster(source, profile, options, episodes);
            return recording(source, files, recordingId, robotId, recMeta, resolved, episodes);
        }
        if (source.format() == SourceFormat.ROSBAG2_SQLITE3) {
            Collector c = new Collector(profile);
            files.addAll(Rosbag2SqliteSource.read(source, c, raw));
            Sidecars.add(c, Sidecars.find(source), files, raw);
            recordingId = Sources.recordingId(files);
            resolved = c.resolvedProfile();
            recMeta.putAll(c.recordingMetadata);
            episodes.add(c.episode(recordingId, 0, resolved, robotId, options.timestampRule()));
            return recording(source, files, recordingId, robotId, recMeta, resolved, episodes);
        }
        for (Path p : source.files()) files.add(Sources.sourceFile(p, raw));
        recordingId = Sources.recordingId(files);
        switch (source.format()) {
            case ROS1_BAG -> {
                Collector c = new Collector(profile);
                Ros1BagSource.read(source.files().get(0), c, null, raw);
                Sidecars.add(c, Sidecars.find(source), files, raw);
                recordingId = Sources.recordingId(files);
                resolved = c.resolvedProfile();
                episodes.add(c.episode(recordingId, 0, resolved, robotId, options.timestampRule()));
            }
            case RLDS_TFRECORD -> {
                resolved = null;
                int index = 0;
                for (Path p : source.files()) {
                    for (Collector c : RldsSource.read(p, profile, options)) {
                        RobotProfile r = c.resolvedProfile();
                        if (resolved == null) resolved = r;
                        recMeta.putAll(c.recordingMetadata);
                        episodes.add(c.episode(recordingId, index++, r, robotId, options.timestampRule()));
                    }
                }
                if (resolved == null) resolved = profile.resolve(List.of());
            }
            case LEROBOT -> {
                LeRobotSource.Dataset d = LeRobotSource.read(source.root(), profile, options);
                recMeta.putAll(d.metadata());
                resolved = null;
                int index = 0;
                for (Collector c : d.episodes()) {
                    RobotProfile r = c.resolvedProfile();
                    if (resolved == null) resolved = r;
                    episodes.add(c.episode(recordingId, index++, r, robotId, options.timestampRule()));
                }
                if (resolved == null) resolved = profile.resolve(List.of());
            }
            default -> throw new IllegalStateException("unhandled format " + source.format());
        }
        checkMaster(source, profile, options, episodes);
        return recording(source, files, recordingId, robotId, recMeta, resolved, episodes);
    }

    /**
     * A master the profile names must be in every episode: a recording without it would otherwise be aligned
     * to a made-up clock.
     *
     * @throws IngestException naming the first such episode, unless {@link IngestOptions#allowMissingMaster()}
     */
    private static void checkMaster(Sources.Source source, RobotProfile profile, IngestOptions options,
                                    List<Episode> episodes) throws IngestException {
        if (profile.master().isEmpty() || options.allowMissingMaster()) {
            return;
        }
        String master = profile.master().get();
        for (Episode ep : episodes) {
            if (ep.stream(master).isEmpty()) {
                List<String> topics = ep.streams().stream().map(StreamData::topic).toList();
                throw new IngestException(source.root().toString(), -1, "episode " + ep.episodeId()
                        + ": the profile's master " + master + " (" + profile.source() + ") is not in it; topics: "
                        + String.join(", ", topics) + "; name another master or pass --allow-missing-master"
                        + " (its frames then follow a fixed 10 Hz clock)");
            }
        }
    }

    private static Recording recording(Sources.Source source, List<SourceFile> files, String recordingId, String robotId,
                                       Map<String, String> recMeta, RobotProfile resolved, List<Episode> episodes) {
        if (robotId.isEmpty() && !episodes.isEmpty()) robotId = episodes.get(0).robotId();
        return new Recording(recordingId, source.format(), files, robotId, recMeta, resolved, episodes);
    }
}
