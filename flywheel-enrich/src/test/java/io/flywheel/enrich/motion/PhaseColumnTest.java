package io.flywheel.enrich.motion;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flywheel.lake.TableSchemas;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The phase labels enrich writes are the values the lake's {@code frames.phase} column declares. */
class PhaseColumnTest {
    @Test
    void phaseLabelsAreTheValuesTheFramesSchemaDeclares() {
        assertEquals(TableSchemas.PHASES, Arrays.stream(Phase.values()).map(Phase::label).toList());
    }
}
