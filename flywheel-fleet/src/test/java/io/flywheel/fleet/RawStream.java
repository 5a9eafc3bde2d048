package io.flywheel.fleet;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;

/**
 * A hand-driven bidirectional stream of the gateway for the tests: sends exactly the requests a test gives (also the
 * wrong ones a client never sends) and records the gateway's answers.
 *
 * @param <Q> the request type
 * @param <A> the answer type
 */
class RawStream<Q, A> implements AutoCloseable {
    private static final Object COMPLETED = new Object();
    private final ManagedChannel channel;
    private final StreamObserver<Q> requests;
    private final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
    final List<A> acks = new ArrayList<>();
    Status status;

    /** @param call opens the stream on a stub, e.g. {@code FleetGatewayStub::uploadEpisode} */
    RawStream(String target, String token,
            BiFunction<FleetGatewayGrpc.FleetGatewayStub, StreamObserver<A>, StreamObserver<Q>> call) {
        Metadata h = new Metadata();
        h.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        channel = NettyChannelBuilder.forTarget(target).usePlaintext()
                .intercept(MetadataUtils.newAttachHeadersInterceptor(h)).build();
        requests = call.apply(FleetGatewayGrpc.newStub(channel), new StreamObserver<>() {
            @Override
            public void onNext(A a) {
                events.add(new Object[] {a});
            }

            @Override
            public void onError(Throwable t) {
                events.add(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                events.add(COMPLETED);
            }
        });
    }

    RawStream<Q, A> send(Q r) {
        requests.onNext(r);
        return this;
    }

    /** @return the next answer, or null once the stream has ended ({@link #status} then says how) */
    @SuppressWarnings("unchecked")
    A next() throws InterruptedException {
        if (status != null) {
            return null;
        }
        Object ev = events.poll(20, TimeUnit.SECONDS);
        if (ev == null) {
            throw new AssertionError("no answer from the gateway in 20 s");
        }
        if (ev instanceof Object[] box) {
            A a = (A) box[0];
            acks.add(a);
            return a;
        }
        status = ev == COMPLETED ? Status.OK : (Status) ev;
        return null;
    }

    /** @return how the stream ended, reading the answers up to there */
    Status end() throws InterruptedException {
        while (next() != null) {
            // keep reading
        }
        return status;
    }

    /** Cuts the stream (as a robot losing its connection). */
    void cancel() {
        requests.onError(Status.CANCELLED.withDescription("cut by the test").asRuntimeException());
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
