package io.flywheel.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.google.protobuf.ByteString;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.v1.Begin;
import io.flywheel.fleet.v1.Chunk;
import io.flywheel.fleet.v1.End;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.flywheel.fleet.v1.UploadAck;
import io.flywheel.fleet.v1.UploadRequest;
import io.flywheel.lake.Lake;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;

/**
 * N robots uploading one file each at once to a gateway on loopback, against a plain copy of the same bytes to the
 * same disk by N threads (each file forced to disk at its end, as the gateway forces a staged file before landing it).
 *
 * <p>Each robot is its own gRPC channel with its token and sends BEGIN, then CHUNKs of {@code chunk} KiB with at most
 * {@code window} unacknowledged, then END, timing each chunk from its send to the ack that covers it. The files are
 * the MCAP magic followed by random bytes, so that the gateway's ingest worker refuses each landed file at once and
 * the gateway's time goes to the upload path (receive, hash, stage, land), which is what is measured; ingest has its
 * own benchmark. The JVM's heap in use is sampled every 50 ms while the robots upload, and its CPU time is taken
 * around the uploads (the robots and the gateway share the machine's cores).
 *
 * <p>Arguments: folder (must not exist), robots, MiB per robot, chunk KiB, window. Prints JSON lines.
 */
public final class UploadBench {
    private static final byte[] MCAP_MAGIC = {(byte) 0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

    private UploadBench() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int robots = Integer.parseInt(args[1]);
        long size = Long.parseLong(args[2]) << 20;
        int chunk = Integer.parseInt(args[3]) << 10;
        int window = Integer.parseInt(args[4]);
        Files.createDirectories(dir.resolve("src"));
        List<Path> files = new ArrayList<>();
        List<String> shas = new ArrayList<>();
        for (int r = 0; r < robots; r++) {
            Path f = dir.resolve("src").resolve("robot-" + r + ".mcap");
            write(f, size, r);
            files.add(f);
            shas.add(FleetClient.sha256(f));
        }
        double copyS = copy(files, dir.resolve("copy"));
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            List<String> tokens = new ArrayList<>();
            for (int r = 0; r < robots; r++) {
                tokens.add(RobotTokens.add(lake, "robot-" + r).token());
            }
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder().host("127.0.0.1").port(0)
                    .build())) {
                AtomicLong heapMax = new AtomicLong();
                Thread sampler = new Thread(() -> {
                    Runtime rt = Runtime.getRuntime();
                    while (!Thread.currentThread().isInterrupted()) {
                        heapMax.accumulateAndGet(rt.totalMemory() - rt.freeMemory(), Math::max);
                        try {
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "heap-sampler");
                sampler.setDaemon(true);
                sampler.start();
                List<Double> latenciesMs = Collections.synchronizedList(new ArrayList<>());
                ExecutorService pool = Executors.newFixedThreadPool(robots);
                com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean();
                long cpu0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                List<Future<Boolean>> done = new ArrayList<>();
                for (int r = 0; r < robots; r++) {
                    int robot = r;
                    done.add(pool.submit(() -> upload(gw.port(), tokens.get(robot), "robot-" + robot, files.get(robot),
                            shas.get(robot), size, chunk, window, latenciesMs)));
                }
                int landed = 0;
                for (Future<Boolean> f : done) {
                    landed += f.get() ? 1 : 0;
                }
                double uploadS = (System.nanoTime() - t0) / 1e9;
                double cpuS = (os.getProcessCpuTime() - cpu0) / 1e9;
                sampler.interrupt();
                pool.shutdown();
                List<Double> lat = new ArrayList<>(latenciesMs);
                Collections.sort(lat);
                double mb = robots * (double) size / 1e6;
                boolean bytesOk = true;
                for (int r = 0; r < robots; r++) {
                    Path landedFile = dir.resolve("lake/raw/robot-" + r + "/" + shas.get(r) + ".mcap");
                    bytesOk &= Files.size(landedFile) == size;
                }
                System.out.printf(Locale.ROOT, "{\"robots\":%d,\"mib_per_robot\":%d,\"chunk_kib\":%d,\"window\":%d,"
                        + "\"upload_s\":%.2f,\"upload_mb_s\":%.1f,\"copy_s\":%.2f,\"copy_mb_s\":%.1f,"
                        + "\"ratio_to_copy\":%.2f,\"ack_p50_ms\":%.2f,\"ack_p99_ms\":%.2f,\"chunks\":%d,"
                        + "\"landed\":%d,\"landed_bytes_ok\":%b,\"heap_max_mb\":%.0f,\"cpu_s\":%.2f}%n", robots, size >> 20,
                        chunk >> 10, window, uploadS, mb / uploadS, copyS, mb / copyS, copyS / uploadS,
                        pct(lat, 0.50), pct(lat, 0.99), lat.size(), landed, bytesOk, heapMax.get() / 1e6, cpuS);
            }
        }
    }

    static void write(Path f, long size, int seed) throws IOException {
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] block = new byte[1 << 20];
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long at = 0; at < size; at += block.length) {
                for (int i = 0; i < block.length; i += 8) {
                    long v = rnd.nextLong();
                    for (int b = 0; b < 8; b++) {
                        block[i + b] = (byte) (v >>> (8 * b));
                    }
                }
                if (at == 0) {
                    System.arraycopy(MCAP_MAGIC, 0, block, 0, MCAP_MAGIC.length);
                }
                ch.write(ByteBuffer.wrap(block, 0, (int) Math.min(block.length, size - at)));
            }
        }
    }

    /** The peer: every file copied by its own thread, forced to disk at its end. @return seconds */
    static double copy(List<Path> files, Path to) throws Exception {
        Files.createDirectories(to);
        ExecutorService pool = Executors.newFixedThreadPool(files.size());
        long t0 = System.nanoTime();
        List<Future<?>> done = new ArrayList<>();
        for (Path f : files) {
            done.add(pool.submit(() -> {
                Path out = to.resolve(f.getFileName());
                Files.copy(f, out);
                try (FileChannel ch = FileChannel.open(out, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                return null;
            }));
        }
        for (Future<?> d : done) {
            d.get();
        }
        pool.shutdown();
        return (System.nanoTime() - t0) / 1e9;
    }

    /** One robot's upload. @return whether the gateway answered the upload as landed */
    static boolean upload(int port, String token, String robot, Path file, String sha, long size, int chunk, int window,
            List<Double> latenciesMs) throws Exception {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                .maxInboundMessageSize(8 << 20).build();
        try {
            FleetGatewayGrpc.FleetGatewayStub stub = FleetGatewayGrpc.newStub(channel)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
            Semaphore inFlight = new Semaphore(window);
            CompletableFuture<Void> begun = new CompletableFuture<>();
            CompletableFuture<Boolean> finished = new CompletableFuture<>();
            long chunks = (size + chunk - 1) / chunk;
            long[] sentAt = new long[(int) chunks];
            long[] ackedChunks = {0};
            StreamObserver<UploadRequest> out = stub.uploadEpisode(new StreamObserver<UploadAck>() {
                @Override
                public void onNext(UploadAck ack) {
                    if (ack.hasBegun()) {
                        begun.complete(null);
                    } else if (ack.hasOffset()) {
                        long upTo = ack.getOffset().getAckedOffset() / chunk;
                        long now = System.nanoTime();
                        synchronized (ackedChunks) {
                            for (long c = ackedChunks[0]; c < Math.min(upTo, chunks); c++) {
                                latenciesMs.add((now - sentAt[(int) c]) / 1e6);
                                inFlight.release();
                            }
                            ackedChunks[0] = Math.max(ackedChunks[0], Math.min(upTo, chunks));
                        }
                    } else if (ack.hasDone()) {
                        finished.complete(ack.getDone().getLandedPath().length() > 0);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    begun.completeExceptionally(t);
                    finished.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                    finished.complete(false);
                }
            });
            out.onNext(UploadRequest.newBuilder().setBegin(Begin.newBuilder().setRobotId(robot).setEpisodeId(robot)
                    .setFileName(file.getFileName().toString()).setSizeBytes(size).setSha256(sha)
                    .setKind(FileKind.MCAP)).build());
            begun.get(60, TimeUnit.SECONDS);
            byte[] buf = new byte[chunk];
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                for (long c = 0; c < chunks; c++) {
                    int n = (int) Math.min(chunk, size - c * chunk);
                    ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                    while (bb.hasRemaining()) {
                        ch.read(bb, c * chunk + bb.position());
                    }
                    inFlight.acquire();
                    sentAt[(int) c] = System.nanoTime();
                    out.onNext(UploadRequest.newBuilder().setChunk(Chunk.newBuilder().setOffset(c * chunk)
                            .setData(ByteString.copyFrom(buf, 0, n))).build());
                }
            }
            out.onNext(UploadRequest.newBuilder().setEnd(End.getDefaultInstance()).build());
            out.onCompleted();
            return finished.get(300, TimeUnit.SECONDS);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static double pct(List<Double> sorted, double q) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.floor(q * sorted.size())));
    }
}
