package io.flywheel.serve.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.StorageConfig;
import io.flywheel.quality.RuleSet;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;
import io.flywheel.testkit.SharedData;
import io.flywheel.testkit.S3TestServer;

/**
 * Ingest, training-set build, load and warm against a real S3-compatible server (s3proxy on a
 * loopback port with a filesystem blob store and AWS v4 signature checking): the lake lives only in
 * the bucket; the raw MCAP files stay where they are.
 */
class S3TrainsetTest {

    @TempDir
    Path dir;
    private S3TestServer s3;
    private String endpoint;

    @BeforeEach
    void startServer() throws Exception {
        s3 = S3TestServer.start(dir.resolve("blobs"), "lakebucket");
        endpoint = s3.endpoint();
    }

    @AfterEach
    void stopServer() throws Exception {
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void ingestBuildLoadAndWarmFromAnS3Origin() throws Exception {
        Lake.Options opts = Lake.Options.defaults().withEnvironment(Map.of()).withStorage(StorageConfig.builder()
                .endpoint(endpoint).region("us-east-1").credentials(S3TestServer.KEY, S3TestServer.SECRET).build());
        String uri = "s3://lakebucket/fleet/lake";
        LoaderOptions o = LoaderOptions.builder().batchSize(10).seed(4).build();
        Map<Long, Sample> direct = new HashMap<>();
        try (Lake lake = Lake.init(uri, opts)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(0.2).seed(5).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            try (TrainsetLoader l = TrainsetLoader.open(lake, "train-v1", o)) {
                assertEquals(50, l.size());
                for (Iterator<List<Sample>> it = l.epoch(0); it.hasNext(); ) {
                    it.next().forEach(s -> direct.put(s.sampleIndex(), s));
                }
            }
        }
        assertEquals(50, direct.size());
        assertTrue(Files.isDirectory(dir.resolve("blobs/lakebucket/fleet/lake/trainset_samples.lance/_versions")));

        // the same reads from a local file copy of the bucket give the same plan as from S3 (byte for byte)
        try (TrainsetCache c = TrainsetCache.open(dir.resolve("cache"), uri, opts)) {
            WarmPlan plan = c.plan("train-v1", o);
            assertEquals(uri, plan.lake());
            WarmPlan local;
            try (TrainsetCache lc = TrainsetCache.open(dir.resolve("cache-local"),
                    dir.resolve("blobs/lakebucket/fleet/lake").toString(), Lake.Options.defaults())) {
                local = lc.plan("train-v1", o);
            }
            assertEquals(local.files().size(), plan.files().size());
            for (int i = 0; i < plan.files().size(); i++) {
                assertEquals(local.files().get(i).key(), plan.files().get(i).key());
                assertEquals(local.files().get(i).ranges(), plan.files().get(i).ranges());
            }
            Warmer.Report w = c.warm(plan, 4, Warmer.Progress.NONE);
            assertEquals(plan.bytes(), w.fetchedBytes());
            TrainsetCache.Stats before = c.stats();
            Map<Long, Sample> cached = new HashMap<>();
            try (TrainsetLoader l = c.loader("train-v1", o)) {
                for (Iterator<List<Sample>> it = l.epoch(0); it.hasNext(); ) {
                    it.next().forEach(s -> cached.put(s.sampleIndex(), s));
                }
            }
            TrainsetCacheTest.assertSame(direct, cached);
            TrainsetCache.Stats after = c.stats();
            assertEquals(before.lakeMissBytes(), after.lakeMissBytes(), "a Lance read went to S3 after the warm");
            assertEquals(before.rawMissBytes(), after.rawMissBytes());
            // the cached files are the bucket's bytes
            for (WarmPlan.FileRanges f : plan.files(WarmPlan.Kind.LANCE_DATA)) {
                byte[] onDisk = Files.readAllBytes(dir.resolve("blobs/lakebucket/fleet/lake").resolve(f.key()));
                for (ByteRange r : f.ranges()) {
                    org.junit.jupiter.api.Assertions.assertArrayEquals(
                            java.util.Arrays.copyOfRange(onDisk, (int) r.start(), (int) r.end()), c.store().get(f.key(), r));
                }
            }
        }
    }
}
