package io.flywheel.curate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;

/** JSON files a user names (a neighbours file, a ground truth), read with errors that say where they are wrong. */
public final class JsonFiles {
    private static final ObjectMapper JSON = new ObjectMapper();

    private JsonFiles() {}

    /**
     * @param file the file
     * @param expected what it should be, for messages, e.g. "a simulator's ground_truth.json"
     * @return its tree (a missing node for an empty file)
     * @throws java.nio.file.NoSuchFileException when it does not exist
     * @throws BadInputException naming the file when it is a folder, or the file, line and column when it is not JSON
     */
    public static JsonNode read(Path file, String expected) throws IOException {
        if (Files.isDirectory(file)) {
            throw new BadInputException(file + " is a folder; expected " + expected);
        }
        byte[] bytes = Files.readAllBytes(file);
        try {
            return JSON.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw notJson(file, e, expected);
        }
    }

    /**
     * @return "FILE: not JSON at line L, column C: WHY; expected EXPECTED", WHY being the parser's first line without
     *     its start-marker note
     */
    public static BadInputException notJson(Path file, JsonProcessingException e, String expected) {
        JsonLocation at = e.getLocation();
        String why = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        int cut = why.indexOf(" (start marker at");
        why = (cut >= 0 ? why.substring(0, cut) : why).lines().findFirst().orElse("");
        return new BadInputException(file + ": not JSON at line " + (at == null ? "?" : at.getLineNr()) + ", column "
                + (at == null ? "?" : at.getColumnNr()) + ": " + why + "; expected " + expected, e);
    }
}
