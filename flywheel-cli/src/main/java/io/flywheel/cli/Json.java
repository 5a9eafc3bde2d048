package io.flywheel.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;

/** JSON output of the commands' {@code --json} summaries. */
final class Json {
    /**
     * Field names in snake_case, like the lake's columns and {@code mcap cat}'s keys; local paths as the paths the
     * user typed or would type (Jackson's default writes a {@link Path} as a {@code file://} URI).
     */
    static final ObjectMapper MAPPER = new ObjectMapper()
            .setPropertyNamingStrategy(com.fasterxml.jackson.databind.PropertyNamingStrategies.SNAKE_CASE)
            .registerModule(new SimpleModule("paths").addSerializer(Path.class, ToStringSerializer.instance))
            .enable(SerializationFeature.INDENT_OUTPUT);

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
