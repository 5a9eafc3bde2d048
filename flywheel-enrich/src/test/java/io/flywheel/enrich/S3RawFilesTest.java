package io.flywheel.enrich;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.image.ImageDecoder;
import io.flywheel.enrich.image.ImageFormat;
import io.flywheel.enrich.image.PerceptualHash;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.RawLocator;
import io.flywheel.ingest.Sources;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.quality.RuleSet;
import io.flywheel.raw.RawChannel;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;
import io.flywheel.testkit.S3TestServer;
import io.flywheel.testkit.SharedData;

/**
 * Raw files kept in a lake's bucket on S3 (as the fleet gateway keeps uploads to an S3 lake): {@code raw_files.uri}
 * and the image locators are {@code s3://} URIs, read by byte range through {@link Lake#rawStorage()}. Every image
 * read so equals the bytes read from the local copy, and enrich computes the same pHash from them as from the JPEGs.
 */
class S3RawFilesTest {
    @TempDir
    Path tmp;

    private static RawLocator locator(ImageLocator l, String uri) {
        return RawLocator.fromStored(uri, l.chunkOffset(), l.offset(), l.length(), l.compression(), l.format(),
                l.width(), l.height());
    }

    @Test
    void imagesOfRawFilesOnS3ReadByRangeAndEnrich() throws Exception {
        Path mcap = SharedData.data("camera/bridge-mcap/bridge_ep03.mcap");
        String sha = Sources.sourceFile(mcap).sha256();
        String localUri = mcap.toAbsolutePath().normalize().toUri().toString();
        String key = "lake/raw/arm-1/" + sha + ".mcap";
        String s3Uri = "s3://lakebucket/" + key;
        try (S3TestServer s3 = S3TestServer.start(tmp.resolve("blobs"), "lakebucket");
                Lake lake = Lake.init("s3://lakebucket/lake", Lake.Options.defaults().withEnvironment(s3.environment()))) {
            var blobs = s3.blobStore();
            blobs.putBlob("lakebucket", blobs.blobBuilder(key).payload(Files.readAllBytes(mcap)).build());
            RowSink moved = new RowSink() {
                @Override
                public Set<String> committedRawFiles() {
                    return lake.committedRawFiles();
                }

                @Override
                public OptionalLong commit(RecordingRows rows) {
                    return lake.commit(rows.withRawUris(Map.of(localUri, s3Uri)));
                }
            };
            IngestJob.Result r = IngestJob.run(moved, List.of(mcap), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            assertEquals(10, r.frames());
            assertEquals(s3Uri, lake.rawFile(sha).map(RawFileRow::uri).orElseThrow());

            List<FrameRow> frames;
            try (LakeTable t = lake.table(TableSchemas.FRAMES)) {
                frames = new java.util.ArrayList<>(t.frames(ScanRequest.all()));
            }
            frames.sort(Comparator.comparingInt(FrameRow::frameIndex));
            assertEquals(10, frames.size());
            try (LocatorReader fromS3 = new LocatorReader(lake.rawStorage()); LocatorReader local = new LocatorReader()) {
                for (FrameRow f : frames) {
                    for (ImageLocator l : f.images()) {
                        assertEquals(s3Uri, l.rawUri());
                        assertArrayEquals(local.read(locator(l, localUri)), fromS3.read(locator(l, s3Uri)),
                                f.frameIndex() + " " + l.topic());
                    }
                }
            }
            // a key the bucket does not hold: NoSuchFileException naming it
            try (RawChannel ignored = lake.rawStorage().open("s3://lakebucket/lake/raw/none.mcap")) {
                throw new AssertionError("opened a missing object");
            } catch (NoSuchFileException e) {
                assertTrue(e.getMessage().contains("s3://lakebucket/lake/raw/none.mcap"), e.getMessage());
            }

            // enrich on the S3 lake reads the images from the bucket: the pHash of each is that of its JPEG
            try (PixelEmbedder emb = new PixelEmbedder(); ImageDecoder dec = new ImageDecoder()) {
                EnrichJob.Result e = EnrichJob.run(lake, emb, EnrichOptions.builder().threads(1).build(), p -> { });
                assertEquals(0, e.decodeErrors());
                assertEquals(30, e.images());
                Map<Integer, List<FrameRow>> byIndex = new HashMap<>();
                try (LakeTable t = lake.table(TableSchemas.FRAMES)) {
                    for (FrameRow f : t.frames(ScanRequest.all())) {
                        byIndex.computeIfAbsent(f.frameIndex(), i -> new java.util.ArrayList<>()).add(f);
                    }
                }
                try (LocatorReader local = new LocatorReader()) {
                    for (List<FrameRow> fs : byIndex.values()) {
                        FrameRow f = fs.get(0);
                        for (int cam = 0; cam < f.images().size(); cam++) {
                            ImageLocator l = f.images().get(cam);
                            byte[] jpeg = local.read(locator(l, localUri));
                            assertEquals(PerceptualHash.of(dec.decodeGrey(jpeg, ImageFormat.JPEG, 1, "expected")),
                                    f.enrichment().get(cam).phash());
                        }
                    }
                }
            }
        }
    }
}
