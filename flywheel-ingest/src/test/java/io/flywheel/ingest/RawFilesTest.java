package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.raw.RawStorage;
import io.flywheel.testkit.SharedData;

/**
 * Reading through {@link RawFiles#mirror}: an MCAP and a ROS 1 bag that are not under the mirror's folder are read by
 * positioned reads from the store (here a stand-in that opens the real file by its remote URI), and give the recording
 * the local read gives, with every URI the remote one; a path whose copy is under the folder is read locally.
 */
class RawFilesTest {
    @TempDir
    Path tmp;

    @Test
    void remoteMcapAndBagReadAsTheLocalFilesWithRemoteUris() throws Exception {
        Path mcap = SharedData.data("camera/bridge-mcap/bridge_ep03.mcap");
        Path bag = SharedData.data("ros1-bag/example-lz4.bag");
        AtomicInteger opened = new AtomicInteger();
        RawStorage store = uri -> {
            opened.incrementAndGet();
            Path real = uri.equals("s3://b/robots/ep03.mcap") ? mcap : uri.equals("s3://b/robots/x.bag") ? bag : null;
            if (real == null) {
                throw new java.nio.file.NoSuchFileException(uri);
            }
            return RawStorage.of(FileChannel.open(real, StandardOpenOption.READ));
        };
        RawFiles raw = RawFiles.mirror(tmp, "s3://", store);
        assertEquals(tmp.resolve("b/robots/ep03.mcap"), raw.pathOf("s3://b/robots/ep03.mcap"));
        IngestOptions remote = IngestOptions.builder().rawFiles(raw).build();

        for (String[] c : List.of(new String[] {"s3://b/robots/ep03.mcap", mcap.toString(), "MCAP"},
                new String[] {"s3://b/robots/x.bag", bag.toString(), "ROS1_BAG"})) {
            Path p = raw.pathOf(c[0]);
            assertFalse(raw.isLocal(p));
            Recording far = Ingest.read(new Sources.Source(SourceFormat.valueOf(c[2]), p, List.of(p)), remote);
            Recording near = Ingest.read(Path.of(c[1]));
            assertEquals(near.recordingId(), far.recordingId()); // the same bytes: the same content hash
            assertEquals(1, far.files().size());
            assertEquals(c[0], far.files().get(0).uri());
            assertEquals(near.files().get(0).sha256(), far.files().get(0).sha256());
            assertEquals(near.files().get(0).bytes(), far.files().get(0).bytes());
            assertEquals(c[0], far.metadata().get("source.root"));
            assertEquals(near.episodes().size(), far.episodes().size());
            for (int e = 0; e < near.episodes().size(); e++) {
                List<StreamData> a = near.episodes().get(e).streams();
                List<StreamData> b = far.episodes().get(e).streams();
                assertEquals(a.size(), b.size());
                for (int s = 0; s < a.size(); s++) {
                    assertEquals(a.get(s).topic(), b.get(s).topic());
                    assertTrue(java.util.Arrays.equals(a.get(s).timeNs(), b.get(s).timeNs()), a.get(s).topic());
                    if (a.get(s).locators() != null) {
                        List<RawLocator> la = new ArrayList<>();
                        for (RawLocator l : a.get(s).locators()) {
                            la.add(l == null ? null : new RawLocator(c[0], l.chunkOffset(), l.offset(), l.length(),
                                    l.compression(), l.format(), l.width(), l.height(), l.payload()));
                        }
                        assertEquals(la, List.of(b.get(s).locators()), a.get(s).topic());
                    }
                }
            }
        }
        assertTrue(opened.get() >= 3, "read from the store: " + opened.get()); // the MCAP once, the bag twice (read, hash)
        // a copy under the folder is read locally, still named by its remote URI
        Path copy = Files.createDirectories(tmp.resolve("b/local")).resolve("ep03.mcap");
        Files.copy(mcap, copy);
        assertTrue(raw.isLocal(copy));
        assertEquals("s3://b/local/ep03.mcap", Sources.sourceFile(copy, raw).uri());
    }
}
