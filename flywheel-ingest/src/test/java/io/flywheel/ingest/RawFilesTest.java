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

    @Test
    void remoteMcapLargerThanAReadWindowWithARecordLongerThanOne() throws Exception {
        // 40 messages of 1 MiB and one of 20 MiB (longer than the 16 MiB read window), a JPEG header each, in
        // zstd chunks of 4 MiB: about 60 MiB, so the remote reads cross windows inside records and chunks
        String schema = "std_msgs/Header header\nstring format\nuint8[] data\n"
                + "================================================================================\n"
                + "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
        byte[] jpeg = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/top_down_cam/td_move0.jpg"));
        Path file = tmp.resolve("big.mcap");
        java.util.Random rnd = new java.util.Random(7);
        long t0 = 1_700_000_000_000_000_000L;
        try (io.flywheel.mcap.McapWriter w = io.flywheel.mcap.McapWriter.builder().profile("ros2")
                .chunkSize(4 << 20).build(file)) {
            int ch = w.registerChannel("/cam/image/compressed", "cdr", w.registerSchema("sensor_msgs/msg/CompressedImage",
                    "ros2msg", schema.getBytes(java.nio.charset.StandardCharsets.UTF_8)), java.util.Map.of());
            for (int j = 0; j < 41; j++) {
                byte[] img = java.util.Arrays.copyOf(jpeg, j == 20 ? 20 << 20 : 1 << 20);
                byte[] noise = new byte[img.length - jpeg.length];
                rnd.nextBytes(noise); // not compressible: the file stays large
                System.arraycopy(noise, 0, img, jpeg.length, noise.length);
                long t = t0 + j * 100_000_000L;
                w.writeMessage(ch, j, t, t, new io.flywheel.ros.cdr.CdrWriter(img.length + 64).header(t, "cam")
                        .string("jpeg").byteSequence(img, 0, img.length).toByteArray());
            }
        }
        assertTrue(Files.size(file) > 50L << 20, Files.size(file) + " bytes");
        AtomicInteger reads = new AtomicInteger();
        RawStorage store = uri -> {
            io.flywheel.raw.RawChannel real = RawStorage.of(FileChannel.open(file, StandardOpenOption.READ));
            return new io.flywheel.raw.RawChannel() {
                @Override
                public long size() throws java.io.IOException {
                    return real.size();
                }

                @Override
                public int read(java.nio.ByteBuffer dst, long position) throws java.io.IOException {
                    reads.incrementAndGet();
                    return real.read(dst, position);
                }

                @Override
                public void close() throws java.io.IOException {
                    real.close();
                }
            };
        };
        RawFiles raw = RawFiles.mirror(tmp.resolve("mirror"), "s3://", store);
        Path far = raw.pathOf("s3://b/big.mcap");
        Collector remote = new Collector(IngestOptions.defaults().profile());
        SourceFile sf = McapSource.read(far, remote, raw);
        Collector local = new Collector(IngestOptions.defaults().profile());
        SourceFile lf = McapSource.read(file, local);
        assertEquals(Sources.sha256(file), sf.sha256());
        assertEquals(Files.size(file), sf.bytes());
        assertEquals("s3://b/big.mcap", sf.uri());
        assertTrue(reads.get() >= 4, reads.get() + " reads"); // several windows, not one read of the file
        Episode a = local.episode("rec-x", 0, local.resolvedProfile(), "", io.flywheel.align.TimestampRule.defaults());
        Episode b = remote.episode("rec-x", 0, remote.resolvedProfile(), "", io.flywheel.align.TimestampRule.defaults());
        StreamData x = a.stream("/cam/image/compressed").orElseThrow();
        StreamData y = b.stream("/cam/image/compressed").orElseThrow();
        assertEquals(41, y.size());
        assertTrue(java.util.Arrays.equals(x.timeNs(), y.timeNs()));
        for (int k = 0; k < 41; k++) {
            RawLocator l = x.locators()[k];
            assertEquals(new RawLocator("s3://b/big.mcap", l.chunkOffset(), l.offset(), l.length(), l.compression(),
                    l.format(), l.width(), l.height(), l.payload()), y.locators()[k], "message " + k);
        }
        assertEquals(lf.sha256(), sf.sha256());
    }
}
