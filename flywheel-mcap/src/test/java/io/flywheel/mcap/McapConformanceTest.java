package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The foxglove/mcap conformance corpus (shared/data/mcap-conformance, 416 files): the streamed
 * reader's records, in conformance form ({@link ConformanceJson}), equal each file's expected JSON
 * "records" list; read once from the file and once from an InputStream.
 */
class McapConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static List<Path> corpus() throws IOException {
        Path root = SharedData.data("mcap-conformance");
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
    }

    @Test
    void corpusHas416FilesInSixGroupsEachWithItsJson() throws IOException {
        List<Path> files = corpus();
        assertEquals(416, files.size());
        assertEquals(6, files.stream().map(Path::getParent).distinct().count());
        for (Path p : files) {
            assertEquals(true, Files.exists(json(p)), "missing " + json(p));
        }
    }

    @TestFactory
    Stream<DynamicTest> everyFileReadsAsItsJsonSays() throws IOException {
        List<Path> files = corpus();
        assertEquals(416, files.size());
        return files.stream().map(p -> DynamicTest.dynamicTest(
                p.getParent().getFileName() + "/" + p.getFileName(), () -> check(p)));
    }

    private static void check(Path p) throws IOException {
        JsonNode expected = JSON.readTree(json(p).toFile()).get("records");
        List<Record> fromFile = new ArrayList<>();
        try (McapStreamReader r = McapStreamReader.open(p)) {
            Record rec;
            while ((rec = r.next()) != null) {
                fromFile.add(rec);
            }
            assertEquals(List.of(), r.problems());
            assertEquals(Files.size(p), r.lastGoodOffset());
        }
        assertEquals(expected, toJson(fromFile), p.toString());
        List<Record> fromStream = new ArrayList<>();
        try (InputStream in = Files.newInputStream(p);
             McapStreamReader r = McapStreamReader.open(in, p.toString(), McapStreamReader.Options.defaults())) {
            r.forEach(fromStream::add);
        }
        assertEquals(expected, toJson(fromStream), p + " (as a stream)");
    }

    private static ArrayNode toJson(List<Record> records) {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        records.forEach(r -> a.add(ConformanceJson.of(r)));
        return a;
    }

    private static Path json(Path mcap) {
        String n = mcap.getFileName().toString();
        return mcap.resolveSibling(n.substring(0, n.length() - ".mcap".length()) + ".json");
    }
}
