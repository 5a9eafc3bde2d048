package io.flywheel.fleet;

import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.flywheel.fleet.v1.UploadAck;
import io.flywheel.fleet.v1.UploadRequest;

/** A hand-driven UploadEpisode stream ({@link RawStream}). */
final class RawUpload extends RawStream<UploadRequest, UploadAck> {
    RawUpload(String target, String token) {
        super(target, token, FleetGatewayGrpc.FleetGatewayStub::uploadEpisode);
    }
}
