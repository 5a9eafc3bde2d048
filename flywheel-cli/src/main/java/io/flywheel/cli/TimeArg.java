package io.flywheel.cli;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;

import picocli.CommandLine;

/**
 * Parses a point in time given on the command line into int64 nanoseconds: an integer is taken as
 * nanoseconds, a decimal number as seconds ({@code 1716800000.25}), anything else as an ISO-8601
 * instant ({@code 2024-05-27T09:33:20Z}).
 */
final class TimeArg implements CommandLine.ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        String v = value.trim();
        try {
            if (v.matches("-?\\d+")) {
                return Long.parseLong(v);
            }
            if (v.matches("-?\\d+\\.\\d*")) {
                return new BigDecimal(v).movePointRight(9).longValueExact();
            }
            Instant t = Instant.parse(v);
            return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
        } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a time: give nanoseconds"
                    + " (1716800000250000000), seconds (1716800000.25) or ISO-8601 (2024-05-27T09:33:20.25Z)");
        }
    }
}
