package io.flywheel.cli;

import java.io.IOException;
import java.io.PrintStream;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;

/** JSON output of the commands' {@code --json} summaries. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).enable(SerializationFeature.INDENT_OUTPUT);

    private Json() {}

    /** Prints {@code value} (records, maps, lists) as indented JSON on {@code out}. */
    static void print(PrintStream out, Object value) {
        try {
            out.println(MAPPER.writeValueAsString(value));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
