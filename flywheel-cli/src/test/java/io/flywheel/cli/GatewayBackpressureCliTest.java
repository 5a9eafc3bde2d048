package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.v1.Begin;
import io.flywheel.fleet.v1.Chunk;
import io.flywheel.fleet.v1.End;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.flywheel.fleet.v1.UploadAck;
import io.flywheel.fleet.v1.UploadRequest;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.lake.Lake;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;

/**
 * Backpressure (the issue "Fleet gateway"): with the staging storage throttled to 1 MiB/s ({@code --staging-rate}),
 * 25 robots upload at once from greedy clients that send whenever gRPC lets them (they never wait for an
 * acknowledgement), to a gateway in its own JVM with a 512 MB heap. Every upload must land, byte for byte; the bytes a
 * robot has sent and the gateway has not yet written stay within the stream's flow-control window (64 KiB here) plus
 * a few chunks, never the whole file: the gateway reads the next chunk only after writing the last, so HTTP/2 flow
 * control holds the senders back. The throttle is checked to have applied (the uploads take at least the bytes over
 * the rate), or the test would prove nothing.
 *
 * <p>The files are sidecar MP4s (an {@code ftyp} box, then seeded random bytes): they land and wait for a recording,
 * so that no ingest runs behind the uploads and the test measures the upload path alone.
 */
class GatewayBackpressureCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROBOTS = 25;
    private static final int FILE_BYTES = 512 << 10;
    private static final int CHUNK = 8 << 10;
    private static final int WINDOW = 64 << 10;
    private static final long RATE = 1 << 20;

    @TempDir
    Path tmp;

    /** One greedy robot: sends its chunks whenever the stream is ready; records the worst sent-but-unwritten. */
    private static final class GreedyUpload implements ClientResponseObserver<UploadRequest, UploadAck> {
        final byte[] file;
        final String sha;
        final String robot;
        final CompletableFuture<UploadAck> done = new CompletableFuture<>();
        final AtomicLong acked = new AtomicLong();
        final AtomicLong maxInFlight = new AtomicLong();
        private ClientCallStreamObserver<UploadRequest> out;
        private long sent;
        private boolean begun;
        private boolean ended;

        GreedyUpload(String robot, byte[] file) {
            this.robot = robot;
            this.file = file;
            try {
                this.sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(file));
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<UploadRequest> requestStream) {
            out = requestStream;
            out.setOnReadyHandler(this::pump);
        }

        private synchronized void pump() {
            if (!begun) {
                out.onNext(UploadRequest.newBuilder().setBegin(Begin.newBuilder().setRobotId(robot)
                        .setFileName(robot + ".head.mp4").setSizeBytes(file.length).setSha256(sha)
                        .setKind(FileKind.SIDECAR_MP4).setRecordingSha256("ab".repeat(32)).setCamera("head")).build());
                begun = true;
            }
            while (out.isReady() && sent < file.length) {
                int n = (int) Math.min(CHUNK, file.length - sent);
                out.onNext(UploadRequest.newBuilder().setChunk(Chunk.newBuilder().setOffset(sent)
                        .setData(ByteString.copyFrom(file, (int) sent, n))).build());
                sent += n;
                maxInFlight.accumulateAndGet(sent - acked.get(), Math::max);
            }
            if (sent == file.length && !ended) {
                out.onNext(UploadRequest.newBuilder().setEnd(End.getDefaultInstance()).build());
                out.onCompleted();
                ended = true;
            }
        }

        @Override
        public void onNext(UploadAck a) {
            if (a.hasOffset()) {
                acked.set(a.getOffset().getAckedOffset());
            } else if (a.hasDone()) {
                done.complete(a);
            }
        }

        @Override
        public void onError(Throwable t) {
            done.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            done.completeExceptionally(new AssertionError(robot + ": the stream ended without a done"));
        }
    }

    @Test
    void twentyFiveRobotsOnAThrottledDiskAllLandWithinBoundedMemory() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        List<String> tokens = new ArrayList<>();
        try (Lake l = Lake.open(lake)) {
            for (int i = 0; i < ROBOTS; i++) {
                tokens.add(RobotTokens.add(l, "bp-" + i).token());
            }
        }
        GatewayProcess gw = GatewayProcess.start(tmp.resolve("gw"), null, "gateway", lake, "--grpc-port", "0",
                "--staging-rate", "1MiB", "--stream-window", "64KiB", "--stats-every", "1", "--json");
        List<ManagedChannel> channels = new ArrayList<>();
        try {
            JsonNode listening = JSON.readTree(gw.await(l -> l.contains("\"event\":\"listening\"")));
            String target = listening.get("target").asText();
            Random random = new Random(25);
            List<GreedyUpload> uploads = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < ROBOTS; i++) {
                byte[] file = new byte[FILE_BYTES];
                random.nextBytes(file);
                System.arraycopy(new byte[] {0, 0, 0, 16, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm'}, 0, file, 0, 12);
                Metadata h = new Metadata();
                h.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + tokens.get(i));
                ManagedChannel ch = NettyChannelBuilder.forTarget(target).usePlaintext()
                        .intercept(MetadataUtils.newAttachHeadersInterceptor(h)).build();
                channels.add(ch);
                GreedyUpload u = new GreedyUpload("bp-" + i, file);
                uploads.add(u);
                FleetGatewayGrpc.newStub(ch).uploadEpisode(u);
            }
            for (GreedyUpload u : uploads) {
                UploadAck done = u.done.get(120, TimeUnit.SECONDS);
                assertEquals(UploadState.LANDED, done.getDone().getState(), u.robot + ": " + done);
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            long total = (long) ROBOTS * FILE_BYTES;
            // the throttle applied: 12.5 MiB at 1 MiB/s cannot take much less than 12.5 s (RateLimiter lends 1 s)
            assertTrue(seconds >= total / (double) RATE - 1.5, "uploads took " + seconds + " s: not throttled");
            for (GreedyUpload u : uploads) {
                Path landed = tmp.resolve("lake/raw/" + u.robot + "/" + "ab".repeat(32) + ".head.mp4");
                assertArrayEquals(u.file, Files.readAllBytes(landed), u.robot);
                // the window, the client's own 32 KiB ready threshold and a few chunks in the pipes; not the file
                assertTrue(u.maxInFlight.get() <= WINDOW + (64 << 10) + 4 * CHUNK, u.robot + " had "
                        + u.maxInFlight.get() + " bytes sent and not written (window " + WINDOW + ")");
            }
            long heapMax = 0;
            for (String l : gw.lines()) {
                if (l.contains("\"event\":\"stats\"")) {
                    JsonNode s = JSON.readTree(l);
                    heapMax = Math.max(heapMax, s.get("heap_used_bytes").asLong());
                    assertTrue(s.get("heap_max_bytes").asLong() <= 512L << 20, l);
                }
            }
            assertTrue(heapMax > 0 && heapMax < 512L << 20, "gateway heap " + heapMax);
            System.out.printf("backpressure: %d robots x %d KiB in %.1f s; worst in flight %d KiB; gateway heap peak"
                            + " sampled %d MiB%n", ROBOTS, FILE_BYTES >> 10, seconds,
                    uploads.stream().mapToLong(u -> u.maxInFlight.get()).max().orElse(0) >> 10, heapMax >> 20);
        } finally {
            for (ManagedChannel ch : channels) {
                ch.shutdownNow();
            }
            gw.process().destroy();
            assertTrue(gw.process().waitFor(30, TimeUnit.SECONDS));
        }
        assertEquals(0, gw.process().exitValue(), String.join("\n", gw.lines()));
    }
}
