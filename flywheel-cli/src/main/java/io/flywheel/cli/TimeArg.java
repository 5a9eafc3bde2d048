package io.flywheel.cli;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine;

/**
 * Parses a point in time given on the command line into int64 nanoseconds since the Unix epoch (or the
 * recording's own clock): a number without a unit is seconds, integer or decimal ({@code 1716800000},
 * {@code 1716800000.25}), as {@code date +%s} prints them; a number with a unit suffix is taken in that unit
 * ({@code 1716800000250000000ns}, {@code 1716800000250us}, {@code 1716800000250ms}, {@code 1716800000.25s});
 * anything else is an ISO-8601 instant ({@code 2024-05-27T09:33:20Z}). Sub-nanosecond digits are an error, not
 * rounded.
 */
final class TimeArg implements CommandLine.ITypeConverter<Long> {
    private static final Pattern NUMBER = Pattern.compile("(-?\\d+(?:\\.\\d*)?)\\s*(ns|us|µs|ms|s)?");

    @Override
    public Long convert(String value) {
        String v = value.trim();
        try {
            Matcher m = NUMBER.matcher(v.toLowerCase(Locale.ROOT));
            if (m.matches()) {
                String unit = m.group(2) == null ? "s" : m.group(2);
                int shift = switch (unit) {
                    case "ns" -> 0;
                    case "us", "µs" -> 3;
                    case "ms" -> 6;
                    default -> 9;
                };
                return new BigDecimal(m.group(1)).movePointRight(shift).longValueExact();
            }
            Instant t = Instant.parse(v);
            return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
        } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a time: give seconds"
                    + " (1716800000 or 1716800000.25), nanoseconds with a suffix (1716800000250000000ns; also us, ms, s)"
                    + " or ISO-8601 (2024-05-27T09:33:20.25Z)");
        }
    }
}
