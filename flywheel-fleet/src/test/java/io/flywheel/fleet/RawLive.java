package io.flywheel.fleet;

import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.flywheel.fleet.v1.ObservationAck;
import io.flywheel.fleet.v1.ObservationRequest;

/** A hand-driven StreamObservations stream ({@link RawStream}). */
final class RawLive extends RawStream<ObservationRequest, ObservationAck> {
    RawLive(String target, String token) {
        super(target, token, FleetGatewayGrpc.FleetGatewayStub::streamObservations);
    }

    /** @return the seq of the next answer, which must be a Written ack */
    long nextWritten() throws InterruptedException {
        ObservationAck a = next();
        if (a == null || !a.hasWritten()) {
            throw new AssertionError("expected a written ack, got " + (a == null ? status : a));
        }
        return a.getWritten().getAckedSeq();
    }
}
