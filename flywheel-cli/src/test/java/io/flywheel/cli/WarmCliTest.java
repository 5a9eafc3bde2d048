package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.SharedData;

/** {@code flywheel warm} and {@code flywheel load --cache} on the 25 real BridgeData episodes. */
class WarmCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LINE = Pattern.compile("(/\\S+) \\[(\\d+-\\d+(;\\d+-\\d+)*)\\]");

    @Test
    void listWarmAndLoadThroughTheCache(@TempDir Path tmp) throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        assertEquals(0, CliRun.of("ingest", lake, SharedData.data("camera/bridge-mcap").toString(), "--json").exitCode());
        CliRun b = CliRun.of("trainset", "build", lake, "--tag", "train-v1", "--ratio", "0.2", "--seed", "5",
                "--rate-hz", "0", "--json");
        assertEquals(0, b.exitCode(), b.err());

        CliRun list = CliRun.of("warm", lake, "train-v1", "--list", "--format", "juicefs-ranges");
        assertEquals(0, list.exitCode(), list.err());
        List<String> lines = list.out().lines().toList();
        long listed = 0;
        int raw = 0;
        for (String l : lines) {
            Matcher m = LINE.matcher(l);
            assertTrue(m.matches(), "not a JuiceFS warm line: " + l);
            long prevEnd = -1;
            for (String r : m.group(2).split(";")) {
                long s = Long.parseLong(r.split("-")[0]);
                long e = Long.parseLong(r.split("-")[1]);
                assertTrue(s > prevEnd && e > s && e <= Files.size(Path.of(m.group(1))), l); // merged, inside the file
                prevEnd = e;
                listed += e - s;
            }
            if (m.group(1).endsWith(".mcap")) {
                raw++;
            }
        }
        assertEquals(5, raw); // 5 episodes, one raw MCAP each
        JsonNode lj = JSON.readTree(CliRun.of("warm", lake, "train-v1", "--list", "--json").out());
        assertEquals(listed, lj.get("bytes").asLong());
        assertEquals(lines.size(), lj.get("list").size());
        // released JuiceFS (v1.3.x, v1.4.x) reads one path per line: the same files, whole, in the same order
        CliRun whole = CliRun.of("warm", lake, "train-v1", "--list", "--format", "juicefs");
        assertEquals(0, whole.exitCode(), whole.err());
        List<String> paths = whole.out().lines().toList();
        assertEquals(lines.stream().map(l -> l.substring(0, l.indexOf(" ["))).toList(), paths);
        paths.forEach(p -> assertTrue(Files.isRegularFile(Path.of(p)), p));
        assertEquals(2, CliRun.of("warm", lake, "train-v1", "--list", "--format", "csv").exitCode());

        String cache = tmp.resolve("cache").toString();
        CliRun w = CliRun.of("warm", lake, "train-v1", "--cache", cache, "--json", "--check-batches", "1");
        assertEquals(0, w.exitCode(), w.err());
        JsonNode wj = JSON.readTree(w.out());
        assertEquals(listed, wj.get("fetched_bytes").asLong());
        assertEquals(0, wj.get("check_miss_bytes").asLong());
        assertEquals(1.0, wj.get("check_hit_ratio").asDouble());
        // warming again fetches nothing
        JsonNode again = JSON.readTree(CliRun.of("warm", lake, "train-v1", "--cache", cache, "--json",
                "--check-batches", "0").out());
        assertEquals(0, again.get("fetched_bytes").asLong());
        assertEquals(listed, again.get("already_cached_bytes").asLong());

        CliRun load = CliRun.of("load", lake, "train-v1", "--cache", cache, "--batches", "0", "--json");
        assertEquals(0, load.exitCode(), load.err());
        JsonNode lo = JSON.readTree(load.out());
        assertEquals(50, lo.get("samples").asInt());
        assertEquals(0, lo.get("cache_miss_bytes").asLong());
        assertTrue(lo.get("cache_hit_bytes").asLong() > 0);

        CliRun bad = CliRun.of("warm", lake, "no-such-tag", "--list");
        assertTrue(bad.exitCode() != 0 && bad.err().contains("no training set 'no-such-tag'"), bad.err());
        assertTrue(bad.noStackTrace());
        Path fresh = tmp.resolve("fresh-cache");
        CliRun badCache = CliRun.of("warm", lake, "no-such-tag", "--cache", fresh.toString());
        assertEquals(1, badCache.exitCode(), "an unknown tag is bad input: " + badCache.err());
        assertFalse(java.nio.file.Files.exists(fresh), "no cache folder for an unknown tag");
        CliRun usage = CliRun.of("warm", lake, "train-v1");
        assertEquals(2, usage.exitCode());
        assertTrue(usage.err().contains("--cache DIR"), usage.err());
    }
}
