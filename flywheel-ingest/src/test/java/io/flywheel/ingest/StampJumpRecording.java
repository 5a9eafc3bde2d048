package io.flywheel.ingest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.flywheel.mcap.McapWriter;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * A 4 s ROS 2 MCAP whose camera's header stamps jump back 2 s mid-recording while its log times run on. Ground truth:
 * {@code /joint_states} at 100 Hz, message {@code k} (0..400) logged and stamped at {@code T0 + 10k ms}, its one joint
 * {@code j0} at position {@code 0.01 k} (the seconds since T0, so a paired state names its moment); {@code /cam} at
 * 20 Hz, frame {@code i} (0..79) captured at {@code T0 + 50i ms}, logged 3 ms later, its image bytes
 * {@code FF D8 i FF D9}; its header stamps are the capture times until frame 40, then 2 s earlier (frame 40 is
 * stamped T0 again). Messages are written in log-time order.
 */
public final class StampJumpRecording {
    /** the first message's time, ns */
    public static final long T0 = 1_767_225_600_000_000_000L;
    /** one millisecond in ns */
    public static final long MS = 1_000_000L;
    /** camera frames */
    public static final int FRAMES = 80;

    private StampJumpRecording() {}

    /**
     * @param file the MCAP to write (zstd chunks)
     * @return {@code file}
     */
    public static Path write(Path file) throws IOException {
        try (McapWriter w = McapWriter.builder().profile("ros2").compression(McapWriter.Compression.ZSTD).build(file)) {
            int img = w.registerSchema(Ros2Schemas.COMPRESSED_IMAGE_NAME, Ros2Schemas.ENCODING,
                    Ros2Schemas.COMPRESSED_IMAGE.getBytes(StandardCharsets.UTF_8));
            int js = w.registerSchema(Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING,
                    Ros2Schemas.JOINT_STATE.getBytes(StandardCharsets.UTF_8));
            int cam = w.registerChannel("/cam", "cdr", img, Map.of());
            int j = w.registerChannel("/joint_states", "cdr", js, Map.of());
            CdrWriter cdr = new CdrWriter(256);
            int k = 0;
            for (int i = 0; i <= FRAMES; i++) {
                long capture = T0 + i * 50 * MS;
                long log = capture + 3 * MS;
                for (; k <= 400 && T0 + k * 10 * MS <= log; k++) { // the joint states up to this frame's log time
                    long t = T0 + k * 10 * MS;
                    w.writeMessage(j, k, t, t, cdr.reset().header(t, "base").stringSequence(List.of("j0"))
                            .float64Sequence(new double[] {k * 0.01}).float64Sequence(new double[0])
                            .float64Sequence(new double[0]).toByteArray());
                }
                if (i == FRAMES) {
                    break;
                }
                byte[] jpeg = {(byte) 0xFF, (byte) 0xD8, (byte) i, (byte) 0xFF, (byte) 0xD9};
                long stamp = capture - (i >= 40 ? 2_000 * MS : 0);
                w.writeMessage(cam, i, log, log, cdr.reset().header(stamp, "cam").string("jpeg")
                        .byteSequence(jpeg, 0, jpeg.length).toByteArray());
            }
        }
        return file;
    }
}
