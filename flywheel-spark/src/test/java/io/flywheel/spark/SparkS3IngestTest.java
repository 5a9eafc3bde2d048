package io.flywheel.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.flywheel.testkit.S3TestServer;
import io.flywheel.testkit.SharedData;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

/**
 * The Spark ingest job on recordings in S3 (s3proxy in this JVM, one server and one local[2] session for the class):
 * real recordings (an MCAP and a ROS 1 bag read in place by byte range, a rosbag2 sqlite3 folder copied first)
 * stage the rows the same job stages from the same files on local disk, except that every raw URI names the
 * {@code s3://} object; a cut MCAP is listed with its s3:// URI and stages nothing.
 */
class SparkS3IngestTest {
    private static SparkSession spark;
    private static S3TestServer s3;
    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() throws Exception {
        s3 = S3TestServer.start(tmp.resolve("blobs"), "rec");
        System.setProperty("aws.accessKeyId", S3TestServer.KEY);
        System.setProperty("aws.secretAccessKey", S3TestServer.SECRET);
        spark = SparkSession.builder().master("local[2]").appName("SparkS3IngestTest")
                .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate();
    }

    @AfterAll
    static void stop() throws Exception {
        if (spark != null) {
            spark.close();
        }
        if (s3 != null) {
            s3.close();
        }
        System.clearProperty("aws.accessKeyId");
        System.clearProperty("aws.secretAccessKey");
    }

    @Test
    void s3RecordingsStageTheRowsOfTheSameLocalFilesWithS3Uris() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("fleet"));
        Files.copy(SharedData.data("camera/bridge-mcap/bridge_ep03.mcap"), in.resolve("bridge_ep03.mcap"));
        Files.copy(SharedData.data("ros1-bag/example-lz4.bag"), in.resolve("example-lz4.bag"));
        Path talker = Files.createDirectories(in.resolve("talker"));
        for (String f : List.of("metadata.yaml", "talker.db3")) {
            Files.copy(SharedData.data("rosbag2-sqlite3/talker/" + f), talker.resolve(f));
        }
        byte[] whole = Files.readAllBytes(SharedData.data("camera/bridge-mcap/bridge_ep01.mcap"));
        Files.write(in.resolve("cut.mcap"), java.util.Arrays.copyOf(whole, whole.length / 2));
        Files.writeString(in.resolve("README.md"), "not a recording\n");
        try (S3Client c = S3Client.builder().endpointOverride(URI.create(s3.endpoint())).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(S3TestServer.KEY,
                        S3TestServer.SECRET))).forcePathStyle(true)
                .requestChecksumCalculation(software.amazon.awssdk.core.checksums.RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(software.amazon.awssdk.core.checksums.ResponseChecksumValidation.WHEN_REQUIRED)
                .httpClientBuilder(software.amazon.awssdk.http.apache.ApacheHttpClient.builder()).build();
             Stream<Path> files = Files.walk(in)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                c.putObject(PutObjectRequest.builder().bucket("rec").key("robots/" + in.relativize(f)).build(),
                        RequestBody.fromFile(f));
            }
        }
        S3Store.Settings settings = new S3Store.Settings(s3.endpoint(), S3TestServer.REGION);
        SparkIngest.Summary remote = SparkIngest.run(spark, new SparkIngest.Options(List.of("s3://rec/robots"),
                tmp.resolve("staging-s3"), null, null, null, null, settings));
        SparkIngest.Summary local = SparkIngest.run(spark, new SparkIngest.Options(List.of(in.toString()),
                tmp.resolve("staging-local"), null, null, null, null, null));

        assertEquals(4, remote.recordings(), remote.failed().toString());
        assertEquals(3, remote.ingested());
        assertEquals(local.episodes(), remote.episodes());
        assertEquals(local.frames(), remote.frames());
        assertEquals(3, remote.rawFiles()); // the MCAP, the bag, the db3
        assertEquals(local.rawFiles(), remote.rawFiles());
        assertEquals(1, remote.failed().size());
        assertEquals("s3://rec/robots/cut.mcap", remote.failed().get(0).input());
        assertTrue(remote.failed().get(0).message().contains("s3://rec/robots/cut.mcap"), remote.failed().get(0).message());
        assertEquals("bad_input", remote.failed().get(0).kind());

        Map<String, List<String>> s3Rows = staged(tmp.resolve("staging-s3"), "s3://rec/robots/", "s3://rec/robots/");
        Map<String, List<String>> localRows = staged(tmp.resolve("staging-local"),
                in.toAbsolutePath().toUri().toString(), in.toAbsolutePath() + "/");
        assertEquals(localRows, s3Rows);
        // every raw URI names the object in the bucket
        List<String> uris = spark.read().format("lance").load(tmp.resolve("staging-s3/raw_files.lance").toString())
                .select("uri").as(org.apache.spark.sql.Encoders.STRING()).collectAsList();
        assertEquals(List.of("s3://rec/robots/bridge_ep03.mcap", "s3://rec/robots/example-lz4.bag",
                "s3://rec/robots/talker/talker.db3"), uris.stream().sorted().toList());
        // and so does every image locator of the MCAP's frames (10 frames, one camera)
        List<String> frames = spark.read().format("lance").load(tmp.resolve("staging-s3/frames.lance").toString())
                .select("row").as(org.apache.spark.sql.Encoders.STRING()).collectAsList();
        assertEquals(10, frames.stream().filter(f -> f.contains("\"s3://rec/robots/bridge_ep03.mcap\"")).count());
        assertTrue(frames.stream().noneMatch(f -> f.contains("file:")), "no frame names a local file");
    }

    /**
     * @return dataset -> its row documents, sorted, with {@code uriPrefix} and {@code pathPrefix} written as
     *     {@code <in>/} and the ingest time left out
     */
    private static Map<String, List<String>> staged(Path staging, String uriPrefix, String pathPrefix)
            throws Exception {
        ObjectMapper json = new ObjectMapper();
        Map<String, List<String>> out = new TreeMap<>();
        for (String name : List.of("raw_files", "episodes", "frames")) {
            List<String> docs = new ArrayList<>();
            for (Row r : spark.read().format("lance").load(staging.resolve(name + ".lance").toString()).collectAsList()) {
                ObjectNode doc = (ObjectNode) json.readTree(r.getString(r.fieldIndex("row")));
                doc.remove("ingestedAtNs");
                docs.add(json.writeValueAsString(doc).replace(uriPrefix, "<in>/").replace(pathPrefix, "<in>/"));
            }
            docs.sort(null);
            out.put(name, docs);
        }
        return out;
    }
}
