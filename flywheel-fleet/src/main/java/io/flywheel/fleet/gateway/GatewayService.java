package io.flywheel.fleet.gateway;

import io.flywheel.fleet.live.LiveStreamService;
import io.flywheel.fleet.upload.UploadService;
import io.flywheel.fleet.v1.FleetGatewayGrpc;
import io.flywheel.fleet.v1.ObservationAck;
import io.flywheel.fleet.v1.ObservationRequest;
import io.flywheel.fleet.v1.UploadAck;
import io.flywheel.fleet.v1.UploadRequest;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.fleet.v1.UploadStatusRequest;
import io.grpc.stub.StreamObserver;

/**
 * The {@code FleetGateway} service of gateway.proto: file uploads ({@link UploadService}) and live episodes
 * ({@link LiveStreamService}).
 */
final class GatewayService extends FleetGatewayGrpc.FleetGatewayImplBase {
    private final UploadService uploads;
    private final LiveStreamService live;

    GatewayService(UploadService uploads, LiveStreamService live) {
        this.uploads = uploads;
        this.live = live;
    }

    @Override
    public StreamObserver<UploadRequest> uploadEpisode(StreamObserver<UploadAck> out) {
        return uploads.uploadEpisode(out);
    }

    @Override
    public void getUploadStatus(UploadStatusRequest req, StreamObserver<UploadStatus> out) {
        uploads.getUploadStatus(req, out);
    }

    @Override
    public StreamObserver<ObservationRequest> streamObservations(StreamObserver<ObservationAck> out) {
        return live.streamObservations(out);
    }
}
