package io.flywheel.stream.sink;

import java.util.Map;
import java.util.TreeMap;

import io.flywheel.error.BadInputException;

/**
 * Kafka positions, per partition: {@code topic/partition -> next offset to read}. Immutable. Text form (as kept in the
 * lake): {@code fleet.alerts/0=12,fleet.episodes/0=40}, sorted by key; empty text for none.
 *
 * @param next topic/partition to the next offset to read (&ge; 0)
 */
public record PartitionOffsets(Map<String, Long> next) {
    public PartitionOffsets {
        next = java.util.Collections.unmodifiableMap(new TreeMap<>(next));
    }

    /** @return no positions */
    public static PartitionOffsets none() {
        return new PartitionOffsets(Map.of());
    }

    /** @return the key of a topic's partition, {@code topic/partition} */
    public static String key(String topic, int partition) {
        return topic + "/" + partition;
    }

    /**
     * @param text the text form, or null / empty for none
     * @param where what the text is (a lake property's name), for the error
     * @throws BadInputException naming {@code where} and the entry when an entry is not {@code topic/partition=offset}
     */
    public static PartitionOffsets parse(String text, String where) {
        Map<String, Long> m = new TreeMap<>();
        if (text != null && !text.isBlank()) {
            for (String entry : text.split(",")) {
                int eq = entry.lastIndexOf('=');
                int slash = entry.lastIndexOf('/', eq);
                try {
                    if (eq < 0 || slash < 1) {
                        throw new NumberFormatException();
                    }
                    Integer.parseInt(entry.substring(slash + 1, eq));
                    long off = Long.parseLong(entry.substring(eq + 1));
                    if (off < 0) {
                        throw new NumberFormatException();
                    }
                    m.put(entry.substring(0, eq), off);
                } catch (NumberFormatException e) {
                    throw new BadInputException(where + ": bad offset entry '" + entry
                            + "': expected topic/partition=offset, offset >= 0");
                }
            }
        }
        return new PartitionOffsets(m);
    }

    /** @return the next offset of {@code topic/partition}, or -1 when none is held */
    public long of(String topic, int partition) {
        return next.getOrDefault(key(topic, partition), -1L);
    }

    /** @return these positions with {@code other}'s on top (a partition in both takes {@code other}'s) */
    public PartitionOffsets with(PartitionOffsets other) {
        Map<String, Long> m = new TreeMap<>(next);
        m.putAll(other.next);
        return new PartitionOffsets(m);
    }

    /** @return the text form */
    public String text() {
        StringBuilder b = new StringBuilder();
        next.forEach((k, v) -> b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return b.toString();
    }
}
