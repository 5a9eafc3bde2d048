package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.mcap.McapWriter;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * Writes MCAP files with known image payloads (unchunked, and chunks stored, zstd, lz4) and checks that
 * every locator reads back exactly the payload written: plain ranges for unchunked messages and stored
 * chunks, chunk offset + offset in the decompressed chunk otherwise.
 */
class GeneratedMcapLocatorTest {
    private static final String IMAGE = "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\n"
            + "uint8 is_bigendian\nuint32 step\nuint8[] data\n"
            + "================================================================================\n"
            + "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"
            + "================================================================================\n"
            + "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";

    @ParameterizedTest
    @CsvSource({"false,NONE", "true,NONE", "true,ZSTD", "true,LZ4"})
    void locatorsReadBackThePayloads(boolean chunked, McapWriter.Compression compression, @TempDir Path tmp)
            throws Exception {
        Path file = tmp.resolve("gen.mcap");
        int n = 7;
        byte[][] jpeg = new byte[n][];
        byte[][] raw = new byte[n][];
        long t0 = 1_700_000_000_000_000_000L;
        try (McapWriter w = McapWriter.builder().compression(compression).useChunks(chunked).chunkSize(2000)
                .build(file)) {
            int sc = w.registerSchema(Ros2Schemas.COMPRESSED_IMAGE_NAME, "ros2msg",
                    Ros2Schemas.COMPRESSED_IMAGE.getBytes(StandardCharsets.UTF_8));
            int si = w.registerSchema("sensor_msgs/msg/Image", "ros2msg", IMAGE.getBytes(StandardCharsets.UTF_8));
            int cc = w.registerChannel("/front/image/compressed", "cdr", sc, Map.of());
            int ci = w.registerChannel("/depth/image", "cdr", si, Map.of());
            CdrWriter cdr = new CdrWriter(4096);
            for (int k = 0; k < n; k++) {
                jpeg[k] = new byte[300 + 37 * k];
                jpeg[k][0] = (byte) 0xFF;
                jpeg[k][1] = (byte) 0xD8;
                for (int i = 2; i < jpeg[k].length; i++) jpeg[k][i] = (byte) (i * 31 + k);
                long t = t0 + k * 33_000_000L;
                // frame ids of odd lengths exercise the CDR alignment before format and data
                byte[] m = cdr.reset().header(t, "cam" + "x".repeat(k)).string(k % 2 == 0 ? "jpeg" : "JPG")
                        .byteSequence(jpeg[k], 0, jpeg[k].length).toByteArray();
                w.writeMessage(cc, k, t, t, m);
                int width = 4 + k, height = 3;
                raw[k] = new byte[width * height * 2];
                for (int i = 0; i < raw[k].length; i++) raw[k][i] = (byte) (i + 7 * k);
                m = cdr.reset().header(t + 1000, "d" + "y".repeat(k)).int32(height).int32(width).string("mono16")
                        .uint8(0).int32(width * 2).byteSequence(raw[k], 0, raw[k].length).toByteArray();
                w.writeMessage(ci, k, t + 2000, t + 2000, m);
            }
        }
        Recording r = Ingest.read(file);
        Episode ep = r.episodes().get(0);
        assertEquals("/front/image/compressed", ep.masterTopic());
        StreamData c = ep.stream("/front/image/compressed").orElseThrow();
        StreamData d = ep.stream("/depth/image").orElseThrow();
        assertEquals(n, c.size());
        assertEquals(n, d.size());
        boolean plain = !chunked || compression == McapWriter.Compression.NONE;
        try (LocatorReader lr = new LocatorReader()) {
            for (int k = 0; k < n; k++) {
                RawLocator lc = c.locators()[k];
                RawLocator ld = d.locators()[k];
                assertEquals(plain, lc.isPlainRange());
                assertEquals(plain ? "" : compression.specName(), lc.compression());
                assertEquals("jpeg", lc.format());
                assertArrayEquals(jpeg[k], lr.read(lc), "compressed image " + k);
                assertEquals("mono16", ld.format());
                assertEquals(4 + k, ld.width());
                assertEquals(3, ld.height());
                assertArrayEquals(raw[k], lr.read(ld), "raw image " + k);
                assertEquals(t0 + k * 33_000_000L, c.timeNs()[k]);
                assertEquals(t0 + k * 33_000_000L + 1000, d.timeNs()[k]); // header stamp, not log time
                assertEquals(t0 + k * 33_000_000L + 2000, d.logTimeNs()[k]);
            }
        }
        if (chunked && !plain) {
            assertTrue(java.util.Arrays.stream(c.locators()).mapToLong(RawLocator::chunkOffset).distinct().count() > 1,
                    "2000-byte chunks: several chunks");
        }
    }
}
