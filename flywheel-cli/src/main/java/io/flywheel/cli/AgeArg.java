package io.flywheel.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;

import picocli.CommandLine;

/**
 * Parses an age given on the command line: a whole number with a unit, {@code s}, {@code m}, {@code h}, {@code d}
 * or {@code w} ({@code 90s}, {@code 12h}, {@code 7d}), or an ISO-8601 duration ({@code P7D}, {@code PT36H}). Negative
 * ages are refused.
 */
final class AgeArg implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        try {
            if (v.matches("\\d+[smhdw]")) {
                long n = Long.parseLong(v.substring(0, v.length() - 1));
                return switch (v.charAt(v.length() - 1)) {
                    case 's' -> Duration.ofSeconds(n);
                    case 'm' -> Duration.ofMinutes(n);
                    case 'h' -> Duration.ofHours(n);
                    case 'd' -> Duration.ofDays(n);
                    default -> Duration.ofDays(Math.multiplyExact(n, 7));
                };
            }
            if (v.startsWith("p")) {
                Duration d = Duration.parse(value.strip());
                if (!d.isNegative()) {
                    return d;
                }
            }
        } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
            // reported below
        }
        throw new CommandLine.TypeConversionException("'" + value + "' is not an age: give a whole number and a unit"
                + " (90s, 30m, 12h, 7d, 2w) or an ISO-8601 duration (P7D, PT36H)");
    }

    /** @return the age as the shortest of the forms above that is exact ({@code 7d}, {@code 36h}, {@code 0s}) */
    static String format(Duration d) {
        long s = d.getSeconds();
        if (d.getNano() != 0) {
            return d.toString();
        }
        if (s != 0 && s % 604_800 == 0) {
            return s / 604_800 + "w";
        }
        if (s != 0 && s % 86_400 == 0) {
            return s / 86_400 + "d";
        }
        if (s != 0 && s % 3_600 == 0) {
            return s / 3_600 + "h";
        }
        if (s != 0 && s % 60 == 0) {
            return s / 60 + "m";
        }
        return s + "s";
    }
}
