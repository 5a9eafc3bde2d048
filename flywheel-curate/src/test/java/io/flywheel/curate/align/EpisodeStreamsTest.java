package io.flywheel.curate.align;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.flywheel.curate.SourceFiles;
import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.ingest.Episode;
import io.flywheel.ingest.Ingest;
import io.flywheel.ingest.StreamData;
import io.flywheel.testkit.SharedData;

/** The streams of a real BridgeData episode read back from its MCAP file. */
class EpisodeStreamsTest {
    @Test
    void theRawFileGivesEveryCameraAndNumericStreamWithItsUsableTimesAscending() throws Exception {
        Path file = SharedData.data("camera/bridge-mcap/bridge_ep00.mcap");
        Episode first = Ingest.read(file).episodes().get(0);
        EpisodeStreams es = EpisodeStreams.read(first.episodeId(), List.of(file.toUri().toString()),
                SourceFiles::localPath);
        assertEquals(first.episodeId(), es.episodeId());
        assertTrue(es.roles().containsValue("camera"), es.roles().toString());
        for (String topic : es.streams().keySet()) {
            StreamData s = first.stream(topic).orElseThrow();
            long[] expected = s.timestamps().resolved().usableTimesNs();
            Arrays.sort(expected);
            assertArrayEquals(expected, es.timesNs(topic), topic);
        }
        NotFoundException none = assertThrows(NotFoundException.class, () -> es.timesNs("/nope"));
        assertTrue(none.getMessage().startsWith("stream '/nope' not found in the raw files of episode "
                + first.episodeId()), none.getMessage());

        BadInputException gone = assertThrows(BadInputException.class,
                () -> EpisodeStreams.read("not-there", List.of(file.toString()), SourceFiles::localPath));
        assertEquals("the raw files of episode 'not-there' no longer hold it ([" + file + "])", gone.getMessage());
        BadInputException noFiles = assertThrows(BadInputException.class,
                () -> EpisodeStreams.read("x", List.of(), SourceFiles::localPath));
        assertEquals("episode 'x' has no source_files in its metadata", noFiles.getMessage());
    }

    @Test
    void sourceFilesAreReadFromTheEpisodeMetadata() {
        String meta = "{\"format\": \"MCAP\", \"source_files\": [\"file:/data/a/rec_0.db3\", \"/data/a/rec_1.db3\"]}";
        assertEquals(List.of("file:/data/a/rec_0.db3", "/data/a/rec_1.db3"), SourceFiles.uris(meta));
        assertEquals(List.of("rec_0.db3", "rec_1.db3"), SourceFiles.names(meta));
        assertEquals(Path.of("/data/a/rec_0.db3"), SourceFiles.localPath("file:/data/a/rec_0.db3"));
        assertEquals(List.of(), SourceFiles.uris("not json"));
        assertEquals(List.of(), SourceFiles.uris(null));
        assertEquals(List.of(), SourceFiles.uris("{}"));
    }
}
