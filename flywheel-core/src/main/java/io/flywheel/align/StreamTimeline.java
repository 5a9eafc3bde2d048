package io.flywheel.align;

import java.util.Locale;

/**
 * Which clock orders and times one stream's messages ({@link TimestampRule}).
 *
 * <ul>
 *   <li>{@link #STAMPS}: the header stamp where present and sane, else the log time (the rule's per-message
 *       fallbacks). Stamps say when a sensor captured; they are the better clock while they run forward.</li>
 *   <li>{@link #LOG_TIME}: the log time (when the recorder received the message), else the header stamp when the log
 *       time is absent, else the publish time. Log times keep the recorded order.</li>
 *   <li>{@link #AUTO} (the default): {@link #LOG_TIME} when the stream's sane header stamps step backwards anywhere
 *       (a sensor clock reset or jump: sorting by such stamps would interleave messages recorded seconds apart),
 *       {@link #STAMPS} otherwise.</li>
 * </ul>
 */
public enum StreamTimeline {
    AUTO, STAMPS, LOG_TIME;

    /** @return the lower-case name used in profiles, options and reports: {@code auto}, {@code stamps}, {@code log_time} */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param s {@code auto}, {@code stamps} (or {@code stamp}, {@code header}), {@code log_time} (or {@code log}); any case
     * @return the timeline
     * @throws IllegalArgumentException naming the accepted values
     */
    public static StreamTimeline parse(String s) {
        String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        return switch (v) {
            case "auto" -> AUTO;
            case "stamps", "stamp", "header", "header_stamps" -> STAMPS;
            case "log_time", "log", "log_times" -> LOG_TIME;
            default -> throw new IllegalArgumentException("unknown timeline '" + s + "'; expected auto, stamps or log_time");
        };
    }
}
