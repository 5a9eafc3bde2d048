package io.flywheel.ingest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.SharedData;

/** The 25 bridge episodes read once per test JVM: MCAP recordings and expected.json. */
final class BridgeData {
    private static List<Recording> mcap;
    private static JsonNode expected;

    private BridgeData() {}

    static Path dir() {
        return SharedData.data("camera/bridge-mcap");
    }

    static synchronized JsonNode expected() {
        if (expected == null) {
            try {
                expected = new ObjectMapper().readTree(dir().resolve("expected.json").toFile());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return expected;
    }

    /** @return the 25 MCAP recordings, by episode number */
    static synchronized List<Recording> mcap() {
        if (mcap == null) {
            List<Recording> out = new ArrayList<>();
            try {
                for (int e = 0; e < 25; e++) {
                    out.add(Ingest.read(dir().resolve(String.format("bridge_ep%02d.mcap", e))));
                }
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            mcap = out;
        }
        return mcap;
    }
}
