package io.flywheel.quality;

import java.util.Locale;

/** Severity of a quality rule: a failed {@code error} rule fails the episode, a failed {@code warning} warns. */
public enum Severity {
    INFO, WARNING, ERROR;

    /** Lower-case name as written in rule files. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code info}, {@code warning} (or {@code warn}), {@code error}; case-insensitive; null when unknown. */
    static Severity parse(String s) {
        switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "info": return INFO;
            case "warning": case "warn": return WARNING;
            case "error": return ERROR;
            default: return null;
        }
    }
}
