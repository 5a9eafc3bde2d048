package io.flywheel.fleet.client;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The robot side needs gRPC and the generated stubs only: neither Lance nor Arrow nor the lake may be on this
 * module's class path (the issue "Fleet gateway": the robot-side client has no Lance dependency). Fails when a
 * dependency of this module brings one of them in.
 */
class RobotSideClasspathTest {
    @ParameterizedTest
    @ValueSource(strings = {"org.lance.Dataset", "org.apache.arrow.memory.BufferAllocator",
            "io.flywheel.lake.Lake", "io.flywheel.ingest.Ingest", "io.flywheel.fleet.upload.UploadService"})
    void notOnTheRobotsClassPath(String className) {
        assertThrows(ClassNotFoundException.class, () -> Class.forName(className));
    }
}
