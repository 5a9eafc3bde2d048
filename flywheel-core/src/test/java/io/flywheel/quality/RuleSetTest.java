package io.flywheel.quality;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RuleSetTest {
    static final long S = 1_000_000_000L;
    static final long MS = 1_000_000L;
    static final long T0 = 1_700_000_000L * S;

    static long[] ticks(double hz, double seconds) {
        int n = (int) Math.round(hz * seconds) + 1;
        long[] t = new long[n];
        for (int i = 0; i < n; i++) t[i] = T0 + Math.round(i * 1e9 / hz);
        return t;
    }

    /** A clean 10 s episode: 30 Hz camera, 100 Hz state. */
    static EpisodeMetrics clean() {
        StreamMetrics cam = StreamMetrics.measure("/cam0", "camera", ticks(30, 10), 30.0, T0, T0 + 10 * S)
                .withResidualP99Ns(0L).withStaticShare(0.1);
        StreamMetrics state = StreamMetrics.measure("/joints", "state", ticks(100, 10), 100.0, T0, T0 + 10 * S)
                .withResidualP99Ns(5 * MS);
        return new EpisodeMetrics("ep-1", 10 * S, List.of(cam, state),
                EpisodeMetrics.missingRoles(List.of("camera", "state"), List.of(cam, state)));
    }

    @Test
    void measureStreamMetricsByHand() {
        StreamMetrics cam = clean().streams().get(0);
        assertEquals(301, cam.messageCount());
        assertEquals(30.0, cam.measuredRateHz(), 1e-6);
        assertEquals(1.0, cam.frameRateRatio(), 1e-6);
        assertEquals(0.0, cam.dropRatio(), 1e-12);
        assertEquals(33_333_334, cam.largestGapNs());
        // every other frame of a 30 Hz camera lost: 151 of 301 expected, measured rate 15 Hz
        long[] half = new long[151];
        for (int i = 0; i < 151; i++) half[i] = T0 + Math.round(2 * i * 1e9 / 30);
        StreamMetrics h = StreamMetrics.measure("/cam0", "camera", half, 30.0, T0, T0 + 10 * S);
        assertEquals(15.0, h.measuredRateHz(), 1e-6);
        assertEquals(0.5, h.frameRateRatio(), 1e-6);
        assertEquals(1 - 151 / 301.0, h.dropRatio(), 1e-12);
        // a stream that stops 3 s before the end: the gap counts to the episode end
        StreamMetrics stop = StreamMetrics.measure("/joints", "state", ticks(100, 7), 100.0, T0, T0 + 10 * S);
        assertEquals(3 * S, stop.largestGapNs());
        // backward steps are counted in arrival order
        StreamMetrics back = StreamMetrics.measure("/x", null, new long[] {T0, T0 + 20 * MS, T0 + 10 * MS, T0 + 30 * MS},
                null, T0, T0 + 30 * MS);
        assertEquals(1, back.monotonicityViolations());
        assertEquals(10 * MS, back.largestGapNs());
        assertNull(back.dropRatio());
        StreamMetrics empty = StreamMetrics.measure("/x", "camera", new long[0], 30.0, T0, T0 + 2 * S);
        assertEquals(2 * S, empty.largestGapNs());
        assertEquals(1.0, empty.dropRatio());
    }

    /**
     * A 30 Hz camera over 10 s (301 frames) whose frames 30-59 (1 s) the robot skipped on purpose and whose frames
     * 150-179 (1 s) were lost: the skips count as received, the loss does not. Largest gap: the lost second, 31
     * frame periods (1.033 s); drop ratio 30/301; rate 270 intervals over 10 s = 27 Hz. Without the skips both
     * seconds would be gaps and the drop ratio 60/301.
     */
    @Test
    void skippedFramesCountAsReceivedAndLostOnesDoNot() {
        long[] all = ticks(30, 10);
        long[] sent = new long[301 - 60];
        long[] skipped = new long[30];
        int k = 0;
        for (int i = 0; i < all.length; i++) {
            if (i >= 30 && i < 60) {
                skipped[i - 30] = all[i];
            } else if (i < 150 || i >= 180) {
                sent[k++] = all[i];
            }
        }
        StreamMetrics m = StreamMetrics.measure("/cam0", "camera", sent, 30.0, T0, T0 + 10 * S, skipped);
        assertEquals(241, m.messageCount());
        assertEquals(30, m.skippedFrames());
        assertEquals(all[180] - all[149], m.largestGapNs());
        assertEquals(30 / 301.0, m.dropRatio(), 1e-12);
        assertEquals(270 / 10.0, m.measuredRateHz(), 1e-6);
        StreamMetrics without = StreamMetrics.measure("/cam0", "camera", sent, 30.0, T0, T0 + 10 * S);
        assertEquals(60 / 301.0, without.dropRatio(), 1e-12);
        assertEquals(0, without.skippedFrames());
        EpisodeMetrics e = new EpisodeMetrics("ep-skip", 10 * S, List.of(m), List.of());
        QualityReport q = RuleSet.defaults().evaluate(e);
        assertTrue(q.flags().contains("camera_gap"), q.flags().toString());
        assertTrue(q.flags().contains("dropped_messages"), q.flags().toString());
        assertFalse(q.flags().contains("heavy_drops"), q.flags().toString());
    }

    @Test
    void defaultRulesLoadAndPassACleanEpisode() {
        RuleSet d = RuleSet.defaults();
        assertEquals(12, d.rules().size());
        QualityRule low = d.rule("low_fps_camera");
        assertEquals(Metric.FRAME_RATE_RATIO, low.metric());
        assertEquals("camera", low.role());
        assertEquals(Op.LT, low.op());
        assertEquals(0.9, low.value());
        assertEquals(Severity.ERROR, low.severity());
        assertTrue(low.line() > 0);
        QualityReport r = d.evaluate(clean());
        assertEquals(QualityReport.Status.PASS, r.status(), r.failures().toString());
        assertTrue(r.flags().isEmpty());
        assertTrue(r.results().stream().allMatch(RuleResult::passed));
    }

    @Test
    void obviousFailuresAreFlagged() {
        EpisodeMetrics c = clean();
        long[] half = new long[151];
        for (int i = 0; i < 151; i++) half[i] = T0 + Math.round(2 * i * 1e9 / 30);
        StreamMetrics slowCam = StreamMetrics.measure("/cam0", "camera", half, 30.0, T0, T0 + 10 * S)
                .withStaticShare(0.95);
        EpisodeMetrics bad = new EpisodeMetrics("ep-2", 10 * S, List.of(slowCam, c.streams().get(1)),
                List.of("gripper"), 1000, 3);
        QualityReport r = RuleSet.defaults().evaluate(bad);
        assertEquals(QualityReport.Status.FAIL, r.status());
        assertEquals(List.of("missing_streams", "low_fps_camera", "dropped_messages", "heavy_drops", "joint_limits",
                "static_camera"), r.flags());
        RuleResult low = r.results().stream().filter(x -> x.ruleId().equals("low_fps_camera")).findFirst().orElseThrow();
        assertEquals("/cam0", low.stream());
        assertEquals(0.5, low.observed(), 1e-6);
        assertEquals(0.9, low.threshold());
        assertFalse(low.passed());
        assertTrue(low.message().contains("/cam0 frame_rate_ratio = 0.5000 < 0.9"), low.message());
        RuleResult missing = r.results().stream().filter(x -> x.ruleId().equals("missing_streams")).findFirst().orElseThrow();
        assertTrue(missing.message().contains("gripper"), missing.message());
        // the residual rule on the camera has no value (unknown): skipped, not failed
        assertTrue(r.results().stream().anyMatch(x -> x.ruleId().equals("alignment_residual") && "/cam0".equals(x.stream())
                && x.outcome() == RuleResult.Outcome.SKIPPED));
    }

    @Test
    void alignmentResidualLimitScalesWithTheNominalPeriodAndTheMethod() {
        // limits: as-of max(20 ms, period), nearest and interpolate max(20 ms, period / 2)
        assertEquals(40 * MS, StreamMetrics.residualLimitNs(io.flywheel.align.AlignMethod.ASOF, 40 * MS));
        assertEquals(20 * MS, StreamMetrics.residualLimitNs(io.flywheel.align.AlignMethod.NEAREST, 40 * MS));
        assertEquals(25 * MS, StreamMetrics.residualLimitNs(io.flywheel.align.AlignMethod.INTERPOLATE, 50 * MS));
        assertEquals(20 * MS, StreamMetrics.residualLimitNs(io.flywheel.align.AlignMethod.ASOF, 10 * MS));
        assertEquals(20 * MS, StreamMetrics.residualLimitNs(io.flywheel.align.AlignMethod.ASOF, 0), "unknown period");
        StreamMetrics state = StreamMetrics.measure("/joint_states", "state", ticks(25, 10), 25.0, T0, T0 + 10 * S);
        // a 25 Hz as-of stream lagging 30 ms at p99: within its 40 ms period, the method itself
        StreamMetrics asof = state.withResidual(30 * MS, StreamMetrics.residualLimitNs(io.flywheel.align.AlignMethod.ASOF, 40 * MS));
        assertEquals(0.75, asof.residualP99LimitRatio(), 1e-12);
        // the same residual with nearest: more than half a period (20 ms), 1.5 x the limit
        StreamMetrics nearest = state.withResidual(30 * MS, StreamMetrics.residualLimitNs(io.flywheel.align.AlignMethod.NEAREST, 40 * MS));
        EpisodeMetrics c = clean();
        for (StreamMetrics sm : new StreamMetrics[] {asof, nearest}) {
            EpisodeMetrics em = new EpisodeMetrics("ep", 10 * S, List.of(c.streams().get(0), sm), List.of());
            RuleResult res = RuleSet.defaults().evaluate(em).results().stream()
                    .filter(x -> x.ruleId().equals("alignment_residual") && "/joint_states".equals(x.stream()))
                    .findFirst().orElseThrow();
            assertEquals(sm == asof, res.passed(), res.message());
            assertEquals(sm == asof ? 0.75 : 1.5, res.observed(), 1e-12);
        }
    }

    @Test
    void warningOnlyGivesWarnAndInfoOnlyGivesPass() {
        EpisodeMetrics shortEp = new EpisodeMetrics("e", 500 * MS, clean().streams(), List.of());
        RuleSet rs = new RuleSet("code", List.of(QualityRule.of("short", Metric.DURATION_S, Op.LT, 1.0, Severity.WARNING)));
        QualityReport w = rs.evaluate(shortEp);
        assertEquals(QualityReport.Status.WARN, w.status());
        assertEquals(List.of("short"), w.flags());
        assertEquals(0.5, w.results().get(0).observed());
        RuleSet info = new RuleSet("code", List.of(QualityRule.of("short", Metric.DURATION_S, Op.LT, 1.0, Severity.INFO)));
        QualityReport i = info.evaluate(shortEp);
        assertEquals(QualityReport.Status.PASS, i.status());
        assertEquals(List.of("short"), i.flags());
    }

    @Test
    void selectorsByStreamAndRole() throws Exception {
        RuleSet rs = RuleSet.parse("rules:\n"
                + "  - {id: joints_slow, metric: frame_rate_hz, stream: /joints, op: '<', value: 150, severity: error}\n"
                + "  - {id: grip_gap, metric: largest_gap_ms, role: gripper, op: '>', value: 10, severity: error}\n", "t.yaml");
        QualityReport r = rs.evaluate(clean());
        assertEquals(List.of("joints_slow"), r.flags());
        assertEquals(1, r.results().stream().filter(x -> x.ruleId().equals("joints_slow")).count());
        RuleResult grip = r.results().stream().filter(x -> x.ruleId().equals("grip_gap")).findFirst().orElseThrow();
        assertEquals(RuleResult.Outcome.SKIPPED, grip.outcome());
    }

    @Test
    void jointLimitsCountsByHand() {
        JointLimits lim = JointLimits.none().with("j1", -1.0, 1.0).with("j2", 0.0, 2.0);
        JointLimits.Result r = lim.check(new String[] {"j1", "j2", "free"},
                new double[] {0.5, 1.0, 99, /* row 2 */ 1.5, -0.1, 99, /* row 3 */ -1.0, Double.NaN, 99});
        assertEquals(6, r.samples());
        assertEquals(3, r.violations());
        assertEquals(1L, r.perJoint().get("j1"));
        assertEquals(2L, r.perJoint().get("j2"));
        EpisodeMetrics m = clean().withJointLimits(r);
        assertEquals(0.5, Metric.JOINT_LIMIT_VIOLATION_RATIO.of(m), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> lim.check(new String[] {"j1", "j2"}, new double[3]));
        assertThrows(IllegalArgumentException.class, () -> lim.with("j3", 1, 0));
    }

    // ---- errors in rule files ----

    static RuleFileException bad(String yaml) {
        return assertThrows(RuleFileException.class, () -> RuleSet.parse(yaml, "rules.yaml"));
    }

    @Test
    void unknownMetricNamesFileLineAndRule() {
        RuleFileException e = bad("rules:\n"
                + "  - id: ok\n    metric: duration_s\n    op: '<'\n    value: 1\n    severity: info\n"
                + "  - id: low_fps\n    metric: fps\n    op: '<'\n    value: 0.9\n    severity: error\n");
        assertEquals("rules.yaml", e.file());
        assertEquals(8, e.line());
        assertEquals("low_fps", e.ruleId());
        assertTrue(e.getMessage().startsWith("rules.yaml:8: rule 'low_fps': unknown metric 'fps'"), e.getMessage());
        assertTrue(e.getMessage().contains("frame_rate_ratio"), e.getMessage());
    }

    @Test
    void badOperatorSeverityValueAndKeys() {
        RuleFileException op = bad("rules:\n  - {id: r1, metric: drop_ratio, op: '=>', value: 0.1, severity: error}\n");
        assertEquals(2, op.line());
        assertEquals("r1", op.ruleId());
        assertTrue(op.getMessage().contains("bad operator '=>'"), op.getMessage());
        // an unquoted > starts a folded scalar in YAML; the error says to quote it
        RuleFileException unq = bad("rules:\n  - id: r2\n    metric: drop_ratio\n    op: >\n    value: 0.1\n    severity: error\n");
        assertEquals("r2", unq.ruleId());
        assertTrue(unq.getMessage().contains("quoted"), unq.getMessage());
        RuleFileException sev = bad("rules:\n  - {id: r3, metric: drop_ratio, op: '>', value: 0.1, severity: fatal}\n");
        assertTrue(sev.getMessage().contains("bad severity 'fatal'"), sev.getMessage());
        RuleFileException val = bad("rules:\n  - {id: r4, metric: drop_ratio, op: '>', value: lots, severity: error}\n");
        assertTrue(val.getMessage().contains("'lots' is not a number"), val.getMessage());
        RuleFileException key = bad("rules:\n  - {id: r5, metric: drop_ratio, op: '>', value: 1, severity: error, roel: camera}\n");
        assertTrue(key.getMessage().contains("unknown key 'roel'"), key.getMessage());
        RuleFileException miss = bad("rules:\n  - {id: r6, metric: drop_ratio, value: 1, severity: error}\n");
        assertTrue(miss.getMessage().contains("rules.yaml:2: rule 'r6': missing 'op'"), miss.getMessage());
        RuleFileException dup = bad("rules:\n  - {id: r7, metric: drop_ratio, op: '>', value: 1, severity: error}\n"
                + "  - {id: r7, metric: drop_ratio, op: '<', value: 1, severity: error}\n");
        assertTrue(dup.getMessage().contains("rules.yaml:3: rule 'r7': duplicate rule id (first at line 2)"), dup.getMessage());
        RuleFileException scope = bad("rules:\n  - {id: r8, metric: duration_s, role: camera, op: '<', value: 1, severity: error}\n");
        assertTrue(scope.getMessage().contains("episode metric"), scope.getMessage());
        RuleFileException noId = bad("rules:\n  - {metric: duration_s, op: '<', value: 1, severity: error}\n");
        assertNull(noId.ruleId());
        assertTrue(noId.getMessage().contains("missing or bad 'id'"), noId.getMessage());
    }

    @Test
    void badYamlSyntaxAndShape(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("broken.yaml");
        Files.writeString(f, "rules:\n  - {id: a, metric: duration_s, op: '<', value: 1, severity: error\n  - {id: b}\n");
        RuleFileException e = assertThrows(RuleFileException.class, () -> RuleSet.load(f));
        assertEquals(f.toString(), e.file());
        assertTrue(e.line() >= 2, "line " + e.line());
        assertTrue(e.getMessage().startsWith(f + ":"), e.getMessage());
        assertTrue(e.getMessage().contains("invalid YAML"), e.getMessage());
        assertTrue(bad("").getMessage().contains("empty rule file"));
        assertTrue(bad("rules: 3\n").getMessage().contains("expected a list of rules"));
        assertTrue(bad("rulez: []\n").getMessage().contains("unknown top-level key 'rulez'"));
        // a bare list and a file on disk both load
        Path ok = dir.resolve("ok.yaml");
        Files.writeString(ok, "- {id: a, metric: duration_s, op: '<', value: 1, severity: error}\n");
        assertEquals(1, RuleSet.load(ok).rules().size());
    }
}
