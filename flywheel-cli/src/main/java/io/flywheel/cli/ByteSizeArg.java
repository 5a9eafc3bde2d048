package io.flywheel.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine;

/**
 * A size in bytes on the command line: a number with an optional unit, {@code B}, {@code KB}/{@code MB}/{@code GB}/
 * {@code TB} (powers of 1000) or {@code KiB}/{@code MiB}/{@code GiB}/{@code TiB} (powers of 1024), e.g. {@code 2GiB},
 * {@code 500MB}, {@code 1048576}. A malformed or non-positive value is a usage error.
 */
final class ByteSizeArg implements CommandLine.ITypeConverter<Long> {
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([KMGT]i?B|B)?", Pattern.CASE_INSENSITIVE);

    @Override
    public Long convert(String value) {
        return parse(value);
    }

    /**
     * @param value e.g. {@code 2GiB}
     * @return bytes, &gt; 0
     * @throws CommandLine.TypeConversionException when it is not a size
     */
    static long parse(String value) {
        Matcher m = SIZE.matcher(value.trim());
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a size (e.g. 2GiB, 500MB, 1048576)");
        }
        double n = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "B" : m.group(2).toUpperCase(Locale.ROOT);
        double scale = switch (unit) {
            case "B" -> 1;
            case "KB" -> 1e3;
            case "MB" -> 1e6;
            case "GB" -> 1e9;
            case "TB" -> 1e12;
            case "KIB" -> 1024.0;
            case "MIB" -> 1024.0 * 1024;
            case "GIB" -> 1024.0 * 1024 * 1024;
            default -> 1024.0 * 1024 * 1024 * 1024;
        };
        double bytes = n * scale;
        if (!(bytes >= 1) || bytes > Long.MAX_VALUE) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a size of at least 1 byte");
        }
        return (long) bytes;
    }

    /** @return {@code bytes} for people: {@code 95.7 KB}, {@code 1.2 GB} (powers of 1000) */
    static String human(long bytes) {
        if (bytes < 1000) {
            return bytes + " B";
        }
        String[] units = {"KB", "MB", "GB", "TB", "PB"};
        double v = bytes;
        int i = -1;
        while (v >= 1000 && i < units.length - 1) {
            v /= 1000;
            i++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[i]);
    }
}
