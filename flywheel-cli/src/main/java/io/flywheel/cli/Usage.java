package io.flywheel.cli;

import java.util.function.Supplier;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * Usage errors (exit 2): an option value a command does not allow, options that exclude or need each other, a missing
 * parameter. They are raised as picocli's {@link ParameterException}, which {@link Main} prints with a "try --help"
 * line and maps to exit 2. Everything else a command throws (bad input, a name the lake does not have, a failed check)
 * exits 1.
 *
 * <p>The line between the two: a value that is wrong whatever the lake or the files hold (out of range, not one of a
 * fixed set, malformed) is a usage error; a value that names something that does not exist or is not what was
 * expected (an episode id, tag, topic or camera the lake lacks, a file that is not a neighbours file, a folder that is
 * not empty) is bad input.
 */
final class Usage {
    private Usage() {}

    /**
     * @param spec the command's spec (inject it with {@code @Spec})
     * @param message what is wrong with the options, naming them
     * @return the usage error, to throw
     */
    static ParameterException error(CommandSpec spec, String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /**
     * A parent command ({@code flywheel}, {@code flywheel lake}, ...) run without one of its subcommands: wrong usage.
     * {@link Main} prints its message and the command's usage on standard error and exits 2.
     *
     * @param spec the parent command's spec
     * @return the usage error, to throw, e.g. "missing subcommand: expected one of versions, log, compact"
     */
    static MissingSubcommand missingSubcommand(CommandSpec spec) {
        java.util.List<String> names = spec.subcommands().keySet().stream().filter(n -> !n.equals("help")).toList();
        return new MissingSubcommand(spec, "missing subcommand: expected one of " + String.join(", ", names));
    }

    /** A parent command without a subcommand ({@link #missingSubcommand}). */
    static final class MissingSubcommand extends ParameterException {
        private static final long serialVersionUID = 1L;

        MissingSubcommand(CommandSpec spec, String message) {
            super(spec.commandLine(), message);
        }
    }

    /**
     * @param ok the condition the options must meet
     * @param message what is wrong when they do not, naming the options
     * @throws ParameterException when {@code ok} is false
     */
    static void require(CommandSpec spec, boolean ok, String message) {
        if (!ok) {
            throw error(spec, message);
        }
    }

    /**
     * @param option the option, e.g. {@code --threads}
     * @param value its value
     * @param min the smallest value allowed
     * @throws ParameterException "OPTION must be >= MIN, got VALUE" when {@code value < min}
     */
    static void atLeast(CommandSpec spec, String option, long value, long min) {
        require(spec, value >= min, option + " must be >= " + min + ", got " + value);
    }

    /**
     * @param option the option, e.g. {@code --blur-threshold}
     * @param value its value
     * @param min the smallest value allowed
     * @throws ParameterException "OPTION must be a number >= MIN, got VALUE" when {@code value} is below, NaN or
     *     infinite
     */
    static void atLeast(CommandSpec spec, String option, double value, double min) {
        require(spec, value >= min && Double.isFinite(value), option + " must be a number >= " + number(min) + ", got "
                + number(value));
    }

    /**
     * @param option the option, e.g. {@code --hot-quality}
     * @throws ParameterException "OPTION must be in MIN..MAX, got VALUE" when {@code value} is outside
     */
    static void inRange(CommandSpec spec, String option, long value, long min, long max) {
        require(spec, value >= min && value <= max, option + " must be in " + min + ".." + max + ", got " + value);
    }

    /** @return a double as the user would type it: 5 for 5.0, 0.25 as it is */
    private static String number(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }

    /**
     * Builds or parses option values with code that checks them (an options builder, a name parser): an
     * {@link IllegalArgumentException} it throws is a usage error.
     *
     * @param option the option the values come from, put before the message unless the message starts with it; null
     *     for none
     * @param build builds the value
     * @return the value
     * @throws ParameterException when {@code build} throws an {@link IllegalArgumentException}
     */
    static <T> T check(CommandSpec spec, String option, Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            String m = e.getMessage() == null ? "value not allowed" : e.getMessage();
            throw error(spec, option == null || m.startsWith(option) ? m : option + ": " + m);
        }
    }
}
