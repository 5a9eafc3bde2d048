package io.flywheel.stream.label;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.rules.Outcome;

class EpisodeLabellerTest {
    private static final long S = 1_000_000_000L;
    private static final long T0 = 1_780_000_000L * S;
    private static final LabelRules RULES = LabelRules.defaults();

    /** Ten-second episode at 10 Hz, gripper open (0.8) with no force, except where {@code emptyFrom..emptyTo} (samples). */
    private static List<ObservationSummary> seconds(int emptyFrom, int emptyTo, boolean successAtEnd, int interventionsAt) {
        List<ObservationSummary> out = new ArrayList<>();
        for (int sec = 0; sec < 10; sec++) {
            ObservationSummary.Builder b = ObservationSummary.newBuilder().setRobotId("r1").setEpisodeId("e1")
                    .setTimeNs(T0 + sec * S).setSamplePeriodNs(S / 10);
            for (int i = 0; i < 10; i++) {
                int n = sec * 10 + i;
                boolean empty = n >= emptyFrom && n < emptyTo;
                b.addGripperOpening(empty ? 0.02f : 0.8f).addGripperForceN(empty ? 0.3f : 0f);
            }
            b.setSuccessSignal(successAtEnd && sec == 9);
            b.setInterventions(sec == interventionsAt ? 1 : 0);
            out.add(b.build());
        }
        return out;
    }

    private static EpisodeEvidence evidence(List<ObservationSummary> s, Alert... alerts) {
        EpisodeEvidence e = new EpisodeEvidence("r1", "e1");
        e.started(T0);
        s.forEach(e::add);
        for (Alert a : alerts) {
            e.add(a);
        }
        e.ended(T0 + 10 * S);
        return e;
    }

    private static Alert eStop(long t) {
        return Alert.newBuilder().setRobotId("r1").setEpisodeId("e1").setKind(Alert.Kind.E_STOP).setTimeNs(t).build();
    }

    @Test
    void successSignalAloneIsSuccess() {
        Label l = EpisodeLabeller.label(RULES, evidence(seconds(-1, -1, true, -1)));
        assertEquals(Outcome.SUCCESS, l.outcome());
        assertEquals(Label.SUCCESS_SIGNAL, l.rule());
        assertEquals("label-rules-1", l.rulesVersion());
    }

    @Test
    void noSignalIsTheRulesOtherwise() {
        Label l = EpisodeLabeller.label(RULES, evidence(seconds(-1, -1, false, -1)));
        assertEquals(Outcome.FAILURE, l.outcome());
        assertEquals(Label.NO_SUCCESS_SIGNAL, l.rule());
    }

    @Test
    void emptyGraspNeedsMoreThanHalfASecond() {
        // samples 15..20 closed and empty: 6 samples = 0.6 s > 0.5 s, across no second boundary
        EpisodeEvidence six = evidence(seconds(15, 21, true, -1));
        assertEquals(600_000_000L, EpisodeLabeller.longestEmptyGraspNs(RULES, six));
        assertEquals(Label.EMPTY_GRASP, EpisodeLabeller.label(RULES, six).rule());
        // exactly 5 samples = 0.5 s is not over 0.5 s
        EpisodeEvidence five = evidence(seconds(15, 20, true, -1));
        assertEquals(500_000_000L, EpisodeLabeller.longestEmptyGraspNs(RULES, five));
        assertEquals(Outcome.SUCCESS, EpisodeLabeller.label(RULES, five).outcome());
        // a run across a second boundary (samples 7..13, 0.7 s) counts as one run
        assertEquals(700_000_000L, EpisodeLabeller.longestEmptyGraspNs(RULES, evidence(seconds(7, 14, false, -1))));
    }

    @Test
    void aMissingSecondBreaksTheRun() {
        List<ObservationSummary> s = new ArrayList<>(seconds(5, 15, false, -1));
        s.remove(1); // samples 10..19 not seen: the run is 5..9 only
        assertEquals(500_000_000L, EpisodeLabeller.longestEmptyGraspNs(RULES, evidence(s)));
    }

    @Test
    void closedWithForceIsAHeldObjectNotAnEmptyGrasp() {
        List<ObservationSummary> s = new ArrayList<>();
        for (ObservationSummary o : seconds(10, 30, true, -1)) {
            ObservationSummary.Builder b = o.toBuilder();
            for (int i = 0; i < b.getGripperForceNCount(); i++) {
                if (b.getGripperOpening(i) < 0.05f) {
                    b.setGripperForceN(i, 4.0f);
                }
            }
            s.add(b.build());
        }
        assertEquals(0, EpisodeLabeller.longestEmptyGraspNs(RULES, evidence(s)));
        assertEquals(Outcome.SUCCESS, EpisodeLabeller.label(RULES, evidence(s)).outcome());
    }

    @Test
    void precedenceEStopThenInterventionThenEmptyGraspThenSuccess() {
        Label all = EpisodeLabeller.label(RULES, evidence(seconds(15, 30, true, 3), eStop(T0 + 4 * S)));
        assertEquals(Label.E_STOP, all.rule());
        assertEquals(Outcome.FAILURE, all.outcome());
        Label noStop = EpisodeLabeller.label(RULES, evidence(seconds(15, 30, true, 3)));
        assertEquals(Label.INTERVENTION, noStop.rule());
        assertEquals(Outcome.NEEDS_REVIEW, noStop.outcome());
        Label graspOnly = EpisodeLabeller.label(RULES, evidence(seconds(15, 30, true, -1)));
        assertEquals(Label.EMPTY_GRASP, graspOnly.rule());
    }

    @Test
    void anEStopOutsideTheEpisodeDoesNotCount() {
        Label after = EpisodeLabeller.label(RULES, evidence(seconds(-1, -1, true, -1), eStop(T0 + 11 * S)));
        assertEquals(Outcome.SUCCESS, after.outcome());
        Alert fault = eStop(T0 + 2 * S).toBuilder().setKind(Alert.Kind.FAULT).build();
        assertEquals(Outcome.SUCCESS, EpisodeLabeller.label(RULES, evidence(seconds(-1, -1, true, -1), fault)).outcome());
    }

    @Test
    void arrivalOrderDoesNotChangeTheLabel() {
        List<ObservationSummary> s = new ArrayList<>(seconds(33, 40, true, -1));
        Collections.shuffle(s, new Random(19));
        EpisodeEvidence e = evidence(s);
        assertEquals(700_000_000L, EpisodeLabeller.longestEmptyGraspNs(RULES, e));
        assertEquals(Label.EMPTY_GRASP, EpisodeLabeller.label(RULES, e).rule());
    }

    @Test
    void aRedeliveredSummaryOrAlertCountsOnce() throws Exception {
        LabelRules twoTakeOvers = LabelRules.parse("intervention:\n  min_interventions: 2\n", "test", RULES);
        List<ObservationSummary> once = seconds(-1, -1, true, 4); // one take-over at second 4, success signal
        List<ObservationSummary> twice = new ArrayList<>(once);
        twice.add(once.get(4)); // the take-over's second delivered again, as an MQTT QoS 1 redelivery relays it
        twice.add(once.get(9));
        EpisodeEvidence e = evidence(twice, eStop(T0 + 20 * S), eStop(T0 + 20 * S));
        assertEquals(1, e.interventions(), "the copy of second 4 is not a second take-over");
        assertEquals(100, e.samples().size(), "ten seconds of 10 Hz samples, not eleven");
        assertEquals(1, e.alerts().size(), "the alert's copy is ignored");
        assertEquals(List.of(T0 + 9 * S), e.successSignalsNs());
        Label l = EpisodeLabeller.label(twoTakeOvers, e);
        assertEquals(Outcome.SUCCESS, l.outcome(), "one take-over is below 2: " + l);
        assertEquals(Label.SUCCESS_SIGNAL, l.rule());
        EpisodeEvidence fresh = new EpisodeEvidence("r1", "e1");
        assertEquals(true, fresh.add(once.get(0)));
        assertEquals(false, fresh.add(once.get(0)), "a copy says so");
    }
}
