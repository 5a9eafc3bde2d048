package io.flywheel.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import io.flywheel.error.ErrorKind;
import io.flywheel.ingest.SourceFormat;
import io.flywheel.ingest.Sources;

/**
 * Finds the recordings under {@code s3://} inputs, as {@code flywheel ingest} finds them in a folder, from the object
 * listing and each candidate's first bytes:
 *
 * <ul>
 *   <li>an object whose first bytes are the MCAP magic or the ROS 1 bag line is a recording of its own, read in place
 *       by byte range; its sidecar videos ({@code NAME.<camera>.mp4} beside it or {@code NAME/<camera>.mp4}, with
 *       their {@code .timestamps}) are copied to the task's temporary folder;</li>
 *   <li>a "folder" (key prefix) holding {@code metadata.yaml} (rosbag2: MCAP or sqlite3 storage) or
 *       {@code meta/info.json} (LeRobotDataset), or split files {@code NAME/NAME_<n>.mcap}, is one recording: its
 *       objects are copied to the task's temporary folder first (SQLite and the folder readers need local files), then
 *       read as a local folder;</li>
 *   <li>a TFRecord ({@code *.tfrecord*}) is copied, then read;</li>
 *   <li>any other object named as a recording ({@code .mcap}, {@code .bag}, {@code .db3}) is a failure naming its
 *       first bytes; other objects (README, JSON ...) are skipped.</li>
 * </ul>
 */
final class S3Discovery {
    private static final byte[] MCAP_MAGIC = {(byte) 0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

    private S3Discovery() {}

    /** The recordings found and the inputs that failed. */
    record Found(List<RecordingTask> tasks, List<TaskResult.Failure> failed) {}

    static Found discover(S3Store store, List<String> inputs) {
        List<RecordingTask> tasks = new ArrayList<>();
        List<TaskResult.Failure> failed = new ArrayList<>();
        for (String in : inputs) {
            int before = tasks.size();
            int failedBefore = failed.size();
            try {
                discover(store, in, tasks, failed);
            } catch (IOException | RuntimeException e) {
                failed.add(new TaskResult.Failure(in, in + ": " + e.getMessage(), ErrorKind.of(e).id()));
            }
            if (tasks.size() == before && failed.size() == failedBefore) {
                failed.add(new TaskResult.Failure(in, "no recordings found in " + in, ErrorKind.BAD_INPUT.id()));
            }
        }
        return new Found(tasks, failed);
    }

    private static void discover(S3Store store, String in, List<RecordingTask> tasks, List<TaskResult.Failure> failed)
            throws IOException {
        S3Store.Location at = S3Store.Location.parse(in);
        String base = at.key();
        List<S3Store.Entry> all = store.list(in);
        // the object itself, or the objects under the prefix as a folder
        Map<String, Long> objects = new TreeMap<>();
        for (S3Store.Entry e : all) {
            String key = S3Store.Location.parse(e.uri()).key();
            if (key.equals(base) || base.isEmpty() || base.endsWith("/") || key.startsWith(base + "/")) {
                objects.put(key, e.size());
            }
        }
        String bucket = "s3://" + at.bucket() + "/";
        // folders that are one recording, outermost first
        TreeSet<String> recordingFolders = new TreeSet<>();
        for (String key : objects.keySet()) {
            String folder = null;
            if (key.endsWith("/metadata.yaml") || key.equals("metadata.yaml")) {
                folder = parent(key);
            } else if (key.endsWith("/meta/info.json")) {
                folder = parent(parent(key));
            } else if (name(key).toLowerCase(Locale.ROOT).endsWith(".mcap") && !parent(key).isEmpty()) {
                String dir = name(parent(key));
                String n = name(key);
                if (n.startsWith(dir + "_") && n.substring(dir.length() + 1, n.length() - 5).matches("\\d+")) {
                    folder = parent(key); // rosbag2 split files NAME/NAME_<n>.mcap
                }
            }
            if (folder != null && recordingFolders.stream().noneMatch(f -> under(key, f))) {
                recordingFolders.add(folder);
            }
        }
        List<RecordingTask> found = new ArrayList<>();
        for (String folder : recordingFolders) {
            List<String> copies = new ArrayList<>();
            for (String key : objects.keySet()) {
                if (under(key, folder)) {
                    copies.add(bucket + key);
                }
            }
            copies.addAll(sidecars(objects, parent(folder), name(folder), bucket, null));
            found.add(new RecordingTask("", bucket + folder, List.of(), copies));
        }
        for (Map.Entry<String, Long> o : objects.entrySet()) {
            String key = o.getKey();
            if (recordingFolders.stream().anyMatch(f -> under(key, f))) {
                continue;
            }
            String lower = name(key).toLowerCase(Locale.ROOT);
            if (lower.endsWith(".mp4") || lower.endsWith(".timestamps")) {
                continue; // a sidecar, taken with its recording
            }
            String uri = bucket + key;
            if (lower.contains(".tfrecord")) {
                found.add(new RecordingTask(SourceFormat.RLDS_TFRECORD.name(), uri, List.of(uri), List.of(uri)));
                continue;
            }
            boolean named = Sources.hasRecordingName(Path.of(name(key)));
            if (!named && !lower.isEmpty() && lower.contains(".")) {
                continue; // README, JSON ...: not read
            }
            byte[] head = store.head(uri, o.getValue(), 16);
            SourceFormat fmt = null;
            if (head.length >= 8 && startsWith(head, MCAP_MAGIC)) {
                fmt = SourceFormat.MCAP;
            } else if (head.length >= 13 && new String(head, 0, 13, StandardCharsets.ISO_8859_1).equals("#ROSBAG V2.0\n")) {
                fmt = SourceFormat.ROS1_BAG;
            }
            if (fmt == null) {
                if (named) {
                    StringBuilder hex = new StringBuilder();
                    for (int i = 0; i < Math.min(head.length, 8); i++) {
                        hex.append(i == 0 ? "" : " ").append(String.format("%02X", head[i]));
                    }
                    failed.add(new TaskResult.Failure(uri, uri + ": not a recording: expected the MCAP magic 89 4D 43 41"
                            + " 50 30 0D 0A or the ROS 1 bag line '#ROSBAG V2.0' (a rosbag2 .db3 is read with the"
                            + " folder holding its metadata.yaml); found " + (head.length == 0 ? "an empty object"
                            : hex.toString()), ErrorKind.BAD_INPUT.id()));
                }
                continue;
            }
            String n = name(key);
            int dot = n.lastIndexOf('.');
            String stem = dot > 0 ? n.substring(0, dot) : n;
            found.add(new RecordingTask(fmt.name(), uri, List.of(uri), sidecars(objects, parent(key), stem, bucket,
                    parent(key).isEmpty() ? stem : parent(key) + "/" + stem)));
        }
        found.sort(java.util.Comparator.comparing(RecordingTask::root));
        tasks.addAll(found);
    }

    /** Sidecar videos of recording NAME: {@code DIR/NAME.<camera>.mp4|.timestamps} and {@code NAME_FOLDER/<camera>.*}. */
    private static List<String> sidecars(Map<String, Long> objects, String dir, String name, String bucket,
                                         String nameFolder) {
        List<String> out = new ArrayList<>();
        String prefix = (dir.isEmpty() ? "" : dir + "/") + name + ".";
        for (String key : objects.keySet()) {
            String lower = key.toLowerCase(Locale.ROOT);
            boolean video = lower.endsWith(".mp4") || lower.endsWith(".timestamps");
            if (!video) {
                continue;
            }
            if (key.startsWith(prefix) && !key.substring(prefix.length()).contains("/")
                    || nameFolder != null && parent(key).equals(nameFolder)) {
                out.add(bucket + key);
            }
        }
        return out;
    }

    private static boolean under(String key, String folder) {
        return folder.isEmpty() || key.startsWith(folder + "/");
    }

    private static String parent(String key) {
        int s = key.lastIndexOf('/');
        return s < 0 ? "" : key.substring(0, s);
    }

    private static String name(String key) {
        return key.substring(key.lastIndexOf('/') + 1);
    }

    private static boolean startsWith(byte[] b, byte[] p) {
        for (int i = 0; i < p.length; i++) {
            if (b[i] != p[i]) {
                return false;
            }
        }
        return true;
    }
}
