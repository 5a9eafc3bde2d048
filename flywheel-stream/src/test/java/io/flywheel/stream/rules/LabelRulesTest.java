package io.flywheel.stream.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.quality.RuleFileException;

class LabelRulesTest {
    @Test
    void defaultsAreTheIssuesThresholds() {
        LabelRules r = LabelRules.defaults();
        assertEquals("label-rules-1", r.version());
        assertEquals(Duration.ofSeconds(10), r.allowedLateness());
        assertEquals(Set.of(Alert.Kind.E_STOP), r.eStopKinds());
        assertEquals(1, r.minInterventions());
        assertEquals(0.05, r.openingBelow(), 1e-12);
        assertEquals(1.0, r.forceBelowN(), 1e-12);
        assertEquals(Duration.ofMillis(500), r.minEmptyGrasp());
        assertEquals(Outcome.FAILURE, r.otherwise());
    }

    @Test
    void aFileOverridesOnlyWhatItNames(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("rules.yaml");
        Files.writeString(f, "version: site-7\nempty_grasp:\n  min_duration_s: 1.5\ne_stop:\n  alert_kinds: [E_STOP, FAULT]\n");
        LabelRules r = LabelRules.load(f);
        assertEquals("site-7", r.version());
        assertEquals(Duration.ofMillis(1500), r.minEmptyGrasp());
        assertEquals(0.05, r.openingBelow(), 1e-12);
        assertEquals(Set.of(Alert.Kind.E_STOP, Alert.Kind.FAULT), r.eStopKinds());
        assertEquals(Duration.ofSeconds(10), r.allowedLateness());
    }

    @Test
    void badFilesNameTheFileLineAndExpectation() {
        RuleFileException yaml = assertThrows(RuleFileException.class,
                () -> LabelRules.parse("version: x\ne_stop: [unclosed\n", "r.yaml", LabelRules.defaults()));
        assertTrue(yaml.getMessage().startsWith("r.yaml:"), yaml.getMessage());
        assertTrue(yaml.getMessage().contains("invalid YAML"), yaml.getMessage());

        RuleFileException range = assertThrows(RuleFileException.class,
                () -> LabelRules.parse("version: x\nempty_grasp:\n  opening_below: 1.5\n", "r.yaml", LabelRules.defaults()));
        assertEquals(3, range.line());
        assertEquals("empty_grasp", range.ruleId());
        assertTrue(range.problem().contains("'opening_below' must be in"), range.problem());

        RuleFileException key = assertThrows(RuleFileException.class,
                () -> LabelRules.parse("version: x\nintervention:\n  min_interventons: 2\n", "r.yaml", LabelRules.defaults()));
        assertEquals(3, key.line());
        assertTrue(key.problem().contains("unknown key 'min_interventons'"), key.problem());

        RuleFileException kind = assertThrows(RuleFileException.class,
                () -> LabelRules.parse("e_stop:\n  alert_kinds: [E_STOP, ESTOP]\n", "r.yaml", LabelRules.defaults()));
        assertEquals(2, kind.line());
        assertTrue(kind.problem().contains("unknown alert kind 'ESTOP'"), kind.problem());

        RuleFileException otherwise = assertThrows(RuleFileException.class,
                () -> LabelRules.parse("success:\n  otherwise: maybe\n", "r.yaml", LabelRules.defaults()));
        assertTrue(otherwise.problem().contains("got 'maybe'"), otherwise.problem());

        RuleFileException missing = assertThrows(RuleFileException.class,
                () -> LabelRules.parse("version: x\n", "r.yaml", null));
        assertTrue(missing.problem().contains("missing"), missing.problem());
    }
}
