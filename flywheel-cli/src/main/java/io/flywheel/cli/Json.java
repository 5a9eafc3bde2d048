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

    /**
     * Reads a JSON file the user named.
     *
     * @param option the option that named it, e.g. {@code --truth}
     * @param file the file
     * @param expected what it should be, for the message, e.g. "a simulator ground_truth.json"
     * @return its tree (a missing node for an empty file)
     * @throws java.nio.file.NoSuchFileException when it does not exist
     * @throws io.flywheel.error.BadInputException naming the option, file, line and column when it is not JSON
     */
    static com.fasterxml.jackson.databind.JsonNode readFile(String option, Path file, String expected) throws IOException {
        if (java.nio.file.Files.isDirectory(file)) {
            throw new io.flywheel.error.BadInputException(option + " " + file + " is a folder; expected " + expected);
        }
        byte[] bytes = java.nio.file.Files.readAllBytes(file);
        try {
            return MAPPER.readTree(bytes);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            var at = e.getLocation();
            String why = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
            int cut = why.indexOf(" (start marker at");
            why = (cut >= 0 ? why.substring(0, cut) : why).lines().findFirst().orElse("");
            throw new io.flywheel.error.BadInputException(option + " " + file + ": not JSON at line "
                    + (at == null ? "?" : at.getLineNr()) + ", column " + (at == null ? "?" : at.getColumnNr()) + ": "
                    + why + "; expected " + expected, e);
        }
    }

    /** Prints {@code value} (records, maps, lists) as indented JSON on {@code out}. */
    static void print(PrintStream out, Object value) {
        try {
            out.println(MAPPER.writeValueAsString(value));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
