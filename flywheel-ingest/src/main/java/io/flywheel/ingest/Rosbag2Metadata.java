package io.flywheel.ingest;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * A rosbag2 recording's {@code metadata.yaml} ({@code rosbag2_bagfile_information}), metadata versions 4 to 9,
 * as rosbag2's {@code rosbag2_storage/metadata_io} writes them:
 * <ul>
 *   <li>4 (Foxy): {@code relative_file_paths}, {@code topics_with_message_count} with
 *       {@code topic_metadata} (name, type, serialization_format, offered_qos_profiles as a YAML text),
 *       {@code compression_format}, {@code compression_mode};</li>
 *   <li>5: {@code files[]} (path, starting_time, duration, message_count);</li>
 *   <li>6: {@code custom_data};</li>
 *   <li>7 (Iron): {@code type_description_hash} per topic;</li>
 *   <li>8: {@code ros_distro};</li>
 *   <li>9 (Jazzy): {@code offered_qos_profiles} as a YAML sequence instead of a text.</li>
 * </ul>
 * Immutable.
 *
 * @param version metadata version, 4..9
 * @param storageIdentifier {@code sqlite3} or {@code mcap}
 * @param files the storage files relative to the bag folder, in recording order ({@code relative_file_paths},
 *     else {@code files[].path})
 * @param topics the topics with their message counts, in the file's order
 * @param startingTimeNs first message's log time, ns since the Unix epoch (or the recorder's clock)
 * @param durationNs last minus first log time, ns
 * @param messageCount messages in all files
 * @param compressionFormat {@code ""} or {@code zstd}
 * @param compressionMode {@code ""}/{@code NONE}, {@code FILE} (each storage file compressed whole, named
 *     {@code *.db3.zstd}) or {@code MESSAGE} (each message's data compressed)
 * @param rosDistro the recorder's ROS distribution ({@code ""} before version 8 or when not set)
 * @param customData recorder-defined key/values ({@code custom_data}, version 6 on; empty when none)
 */
public record Rosbag2Metadata(int version, String storageIdentifier, List<String> files, List<Topic> topics,
                              long startingTimeNs, long durationNs, long messageCount, String compressionFormat,
                              String compressionMode, String rosDistro, Map<String, String> customData) {
    /** Oldest metadata version read. */
    public static final int MIN_VERSION = 4;
    /** Newest metadata version read. */
    public static final int MAX_VERSION = 9;

    public Rosbag2Metadata {
        files = List.copyOf(files);
        topics = List.copyOf(topics);
        // in the recording's order: Map.copyOf iterates in an order that changes from JVM to JVM, and this map
        // becomes JSON in the lake rows
        Map.copyOf(customData); // refuses null keys and values
        customData = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(customData));
    }

    /**
     * One topic of {@code topics_with_message_count}.
     *
     * @param name topic name
     * @param type ROS 2 type, {@code pkg/msg/Name}
     * @param serializationFormat {@code cdr} for every rosbag2 recording made by ROS 2's rmw layers
     * @param offeredQosProfiles the QoS profiles as YAML text (version 9's sequence written back as YAML)
     * @param typeDescriptionHash REP-2011 type hash ({@code RIHS01_...}), {@code ""} before version 7
     * @param messageCount messages recorded on the topic
     */
    public record Topic(String name, String type, String serializationFormat, String offeredQosProfiles,
                        String typeDescriptionHash, long messageCount) {}

    /** @return whether each message's data is zstd-compressed ({@code compression_mode: MESSAGE}) */
    public boolean messageCompressed() {
        return !compressionFormat.isEmpty() && compressionMode.equalsIgnoreCase("MESSAGE");
    }

    /** @return whether each storage file is zstd-compressed whole ({@code compression_mode: FILE}) */
    public boolean fileCompressed() {
        return !compressionFormat.isEmpty() && compressionMode.equalsIgnoreCase("FILE");
    }

    /**
     * Reads a metadata.yaml file.
     *
     * @param file the metadata.yaml
     * @return the metadata
     * @throws IngestException naming the file (and line) when it is not YAML, not a
     *     {@code rosbag2_bagfile_information} mapping, of a version outside 4..9, or a field has the wrong type
     * @throws IOException when reading fails
     */
    public static Rosbag2Metadata read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return parse(file.toString(), new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8), true);
        }
    }

    /**
     * Parses metadata text: a whole metadata.yaml ({@code rosbag2_bagfile_information: ...}) or, with
     * {@code wrapped = false}, the mapping alone (as rosbag2 stores it in a storage file's {@code metadata} table).
     *
     * @param where the file to name in errors
     * @param text the YAML
     * @param wrapped whether the mapping sits under {@code rosbag2_bagfile_information}
     * @throws IngestException as {@link #read}
     */
    public static Rosbag2Metadata parse(String where, String text, boolean wrapped) throws IngestException {
        Object root;
        try {
            LoaderOptions lo = new LoaderOptions();
            lo.setCodePointLimit(16 << 20);
            root = new Yaml(lo).load(new StringReader(text));
        } catch (org.yaml.snakeyaml.error.MarkedYAMLException e) {
            int line = e.getProblemMark() == null ? 0 : e.getProblemMark().getLine() + 1;
            throw new IngestException(where, -1, "line " + line + ": not valid YAML: " + e.getProblem());
        } catch (YAMLException e) {
            throw new IngestException(where, -1, "not valid YAML: " + e.getMessage());
        }
        Map<?, ?> info;
        if (wrapped) {
            if (!(root instanceof Map<?, ?> m) || !(m.get("rosbag2_bagfile_information") instanceof Map<?, ?> i)) {
                throw new IngestException(where, -1, "expected a rosbag2_bagfile_information mapping");
            }
            info = i;
        } else {
            if (!(root instanceof Map<?, ?> i)) {
                throw new IngestException(where, -1, "expected a rosbag2 metadata mapping");
            }
            info = i;
        }
        Object v = info.get("version");
        if (!(v instanceof Number n)) {
            throw new IngestException(where, -1, "rosbag2_bagfile_information.version is " + (v == null ? "missing" : "'" + v + "'")
                    + "; expected an integer " + MIN_VERSION + ".." + MAX_VERSION);
        }
        int version = n.intValue();
        if (version < MIN_VERSION || version > MAX_VERSION) {
            throw new IngestException(where, -1, "rosbag2 metadata version " + version + "; this reader reads versions "
                    + MIN_VERSION + ".." + MAX_VERSION);
        }
        String storage = text(info, "storage_identifier", where);
        List<String> files = new ArrayList<>();
        if (info.get("relative_file_paths") instanceof List<?> rel) {
            for (Object o : rel) files.add(String.valueOf(o));
        }
        if (files.isEmpty() && info.get("files") instanceof List<?> fl) {
            for (Object o : fl) {
                if (o instanceof Map<?, ?> fm && fm.get("path") != null) files.add(String.valueOf(fm.get("path")));
            }
        }
        List<Topic> topics = new ArrayList<>();
        if (info.get("topics_with_message_count") instanceof List<?> tl) {
            int k = 0;
            for (Object o : tl) {
                if (!(o instanceof Map<?, ?> tm) || !(tm.get("topic_metadata") instanceof Map<?, ?> md)) {
                    throw new IngestException(where, -1, "topics_with_message_count[" + k + "]: expected a mapping with"
                            + " topic_metadata");
                }
                String qos = qosText(md.get("offered_qos_profiles"));
                topics.add(new Topic(text(md, "name", where), text(md, "type", where),
                        text(md, "serialization_format", where), qos, text(md, "type_description_hash", where),
                        number(tm, "message_count", where)));
                k++;
            }
        }
        Map<String, String> custom = new java.util.LinkedHashMap<>();
        if (info.get("custom_data") instanceof Map<?, ?> cd) {
            cd.forEach((a, b) -> custom.put(String.valueOf(a), String.valueOf(b)));
        }
        long start = nested(info, "starting_time", "nanoseconds_since_epoch", where);
        long duration = nested(info, "duration", "nanoseconds", where);
        return new Rosbag2Metadata(version, storage, files, topics, start, duration, number(info, "message_count", where),
                text(info, "compression_format", where), text(info, "compression_mode", where),
                text(info, "ros_distro", where), custom);
    }

    /** Version 9 writes the profiles as a sequence; earlier versions as YAML text inside a string. */
    private static String qosText(Object q) {
        if (q == null) return "";
        if (q instanceof String s) return s;
        org.yaml.snakeyaml.DumperOptions d = new org.yaml.snakeyaml.DumperOptions();
        d.setDefaultFlowStyle(org.yaml.snakeyaml.DumperOptions.FlowStyle.BLOCK);
        return new Yaml(d).dump(q).strip();
    }

    private static String text(Map<?, ?> m, String key, String where) throws IngestException {
        Object o = m.get(key);
        if (o == null) return "";
        if (o instanceof Map<?, ?> || o instanceof List<?>) {
            throw new IngestException(where, -1, key + ": expected a text value, found a "
                    + (o instanceof Map<?, ?> ? "mapping" : "sequence"));
        }
        return String.valueOf(o);
    }

    private static long number(Map<?, ?> m, String key, String where) throws IngestException {
        Object o = m.get(key);
        if (o == null) return 0;
        if (o instanceof Number n) return n.longValue();
        throw new IngestException(where, -1, key + " is '" + o + "'; expected an integer");
    }

    private static long nested(Map<?, ?> m, String key, String inner, String where) throws IngestException {
        Object o = m.get(key);
        if (o == null) return 0;
        if (!(o instanceof Map<?, ?> im)) {
            throw new IngestException(where, -1, key + ": expected a mapping with " + inner);
        }
        return number(im, inner, where);
    }
}
